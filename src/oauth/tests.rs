//! OAuth against a scripted protected resource and authorization server on 127.0.0.1, hostile
//! ones included: every discovery rule, client authentication, token answers, redirects,
//! silence, the token file's safety rules and locking, refresh, and login's callback.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use serde_json::{Value, json};

use super::acquire::{Authorizer, Settings};
use super::store::{self, Binding};
use super::token::Token;
use super::{OAuthError, check_offline, url};
use crate::contract::OAuthGrant;
use crate::contract::{Bound, Secret};
use crate::net::testkit::http_server::{Reply, Request as Recorded, Server};
use crate::net::testkit::{with_watchdog, within};
use crate::net::{Client, Endpoint, Reuse};
use crate::result::reason::{OAuthStep, TokenError, TokenFileProblem};
use crate::runtime::sync::lock;
use crate::runtime::{Attempt, Deadline, SecretLog};

const LONG: Duration = Duration::from_secs(5);

/// How the fake world behaves; tests change the parts they are about.
#[derive(Clone)]
struct World {
    /// `WWW-Authenticate` of the 401 (`{root}` replaced).
    challenge: Option<String>,
    /// Whether `HEAD /mcp` gets that 401; otherwise it is a bare 404 and only `POST` is
    /// challenged, as on servers that route `POST` alone.
    challenge_on_head: bool,
    /// Path → JSON document, for GETs (`{root}` replaced).
    docs: HashMap<String, Value>,
    /// Path → raw reply, overriding everything.
    overrides: HashMap<String, Reply>,
    /// The token endpoint's answer (`{root}` replaced in headers).
    token: Reply,
}

/// The running fake: one server plays resource and authorization server.
struct Fake {
    server: Server,
    root: String,
}

impl Fake {
    fn start(world: impl Fn(&str) -> World + Send + Sync + 'static) -> Fake {
        let root: Arc<Mutex<String>> = Arc::default();
        let seen = Arc::clone(&root);
        let server = Server::start(move |r: &Recorded| {
            let root = lock(&seen).clone();
            let w = world(&root);
            let path = r.target.split('?').next().unwrap_or_default().to_string();
            if let Some(reply) = w.overrides.get(&path) {
                return reply.clone();
            }
            if path == "/mcp" && r.method == "HEAD" && !w.challenge_on_head {
                return Reply::status(404);
            }
            if path == "/mcp" {
                let mut reply = Reply::status(401);
                if let Some(c) = &w.challenge {
                    reply = reply.header("WWW-Authenticate", &c.replace("{root}", &root));
                }
                return reply;
            }
            if path == "/token" && r.method == "POST" {
                return w.token.clone();
            }
            match w.docs.get(&path) {
                Some(doc) if r.method == "GET" => Reply::status(200)
                    .header("Content-Type", "application/json")
                    .body(doc.to_string().replace("{root}", &root)),
                _ => Reply::status(404),
            }
        });
        let url = server.url("");
        let url = url.trim_end_matches('/').to_string();
        lock(&root).clone_from(&url);
        Fake { server, root: url }
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::parse(&format!("{}/mcp", self.root)).expect("endpoint")
    }

    fn requests(&self, path: &str) -> Vec<Recorded> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.target.split('?').next() == Some(path))
            .collect()
    }

    fn form(&self) -> Vec<(String, String)> {
        let token = self.requests("/token");
        let last = token.last().map(|r| r.body.clone()).unwrap_or_default();
        url::parse_query(&String::from_utf8_lossy(&last))
    }
}

/// A well-behaved world: challenge with `resource_metadata` and `scope="read"`, protected
/// metadata at the path-inserted location, RFC 8414 metadata, a token answer.
fn good(root: &str) -> World {
    let mut docs = HashMap::new();
    docs.insert(
        "/.well-known/oauth-protected-resource/mcp".into(),
        json!({"resource": format!("{root}/mcp"), "authorization_servers": [root], "scopes_supported": ["meta"]}),
    );
    docs.insert(
        "/.well-known/oauth-authorization-server".into(),
        json!({
            "issuer": root,
            "token_endpoint": format!("{root}/token"),
            "authorization_endpoint": format!("{root}/authorize"),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true
        }),
    );
    World {
        challenge: Some(
            r#"Bearer resource_metadata="{root}/.well-known/oauth-protected-resource/mcp", scope="read""#
                .into(),
        ),
        challenge_on_head: true,
        docs,
        overrides: HashMap::new(),
        token: token_reply(json!({"access_token":"acquired-sensitive-value","token_type":"Bearer","expires_in":3600,"refresh_token":"rotated-sensitive-value","scope":"read"})),
    }
}

fn token_reply(doc: Value) -> Reply {
    Reply::status(200)
        .header("Content-Type", "application/json")
        .body(doc.to_string())
}

fn settings(fake: &Fake, grant: OAuthGrant) -> Settings {
    Settings {
        issuer: fake.root.clone(),
        client_id: "registered-client".into(),
        grant,
        client_secret: Some(Secret::new("client-secret-value".into())),
        refresh_token: None,
        token_file: None,
        scopes: Vec::new(),
        redirect_port: None,
    }
}

fn attempt() -> Attempt {
    Attempt::new(Deadline::after(LONG, Bound::TimeoutMs))
}

/// One `authorization()` call with a fresh authorizer.
fn authorize(fake: &Fake, s: Settings) -> (Result<String, OAuthError>, SecretLog) {
    let secrets = SecretLog::new();
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), secrets.clone());
    let mut client = Client::new(Reuse::Fresh);
    (a.authorization(&mut client, &attempt()), secrets)
}

fn step_of(r: &Result<String, OAuthError>) -> Option<OAuthStep> {
    match r {
        Err(OAuthError::Step { step, .. }) => Some(*step),
        _ => None,
    }
}

fn value<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

// ------------------------------------------------------------------------- client credentials

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
fn scope_precedence_configured_then_challenge_then_metadata() {
    let fake = Fake::start(good);
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    s.scopes = vec!["a".into(), "b".into()];
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
    s.scopes = vec!["read".into(), "admin".into()];
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
    let mut client = Client::new(Reuse::Fresh);
    for _ in 0..3 {
        assert!(a.authorization(&mut client, &attempt()).is_ok());
    }
    assert_eq!(fake.requests("/token").len(), 1);
    let t = super::token::parse(
        &serde_json::from_value(json!({"access_token":"t","token_type":"bearer"}))
            .unwrap_or_default(),
        None,
        SystemTime::UNIX_EPOCH,
    )
    .map_err(|_| ())
    .map(|t| t.expires_at);
    assert_eq!(t, Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(300)));
}

// --------------------------------------------------------------------------------- discovery

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

#[test]
fn each_binding_rule_is_its_own_failure() {
    type Mutate = fn(&mut World, &str);
    let cases: &[(Mutate, OAuthStep)] = &[
        (
            |w, _| {
                w.challenge = Some(r#"Bearer resource_metadata="http://127.0.0.2:9/prm""#.into())
            },
            OAuthStep::ResourceMetadataOrigin,
        ),
        (
            |w, _| {
                w.challenge = None;
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
    ];
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
    s.issuer = format!("{}/tenant", fake.root);
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
        s.issuer = issuer.into();
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
    s.issuer = "https://auth.example.com".into();
    let plain = Endpoint::parse("http://mcp.example.com/mcp").expect("endpoint");
    assert!(matches!(
        check_offline(&s, &plain),
        Err(OAuthError::Step {
            step: OAuthStep::Endpoint,
            ..
        })
    ));
}

// ---------------------------------------------------------------------------- token endpoint

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

// ------------------------------------------------------------------------------- token files

/// A private scratch directory (0700) under the system temporary directory.
fn scratch(name: &str) -> PathBuf {
    let mut suffix = [0u8; 6];
    let _ = super::random::random(&mut suffix);
    let hex: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("agenthealth-oauth-{name}-{hex}"));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    dir
}

/// A public client (no secret) of `fake` that logs in and keeps its tokens in `token_file`.
fn public_client(fake: &Fake, token_file: PathBuf) -> Settings {
    let mut s = settings(fake, OAuthGrant::AuthorizationCode);
    s.client_secret = None;
    s.token_file = Some(token_file);
    s
}

fn binding(fake: &Fake) -> Binding {
    Binding {
        issuer: fake.root.clone(),
        resource: format!("{}/mcp", fake.root),
        client_id: "registered-client".into(),
    }
}

fn token(access: &str, refresh: Option<&str>, expires_in: i64) -> Token {
    let now = SystemTime::now();
    let expires_at = if expires_in >= 0 {
        now + Duration::from_secs(expires_in.unsigned_abs())
    } else {
        now - Duration::from_secs(expires_in.unsigned_abs())
    };
    Token {
        access: Secret::new(access.into()),
        refresh: refresh.map(|r| Secret::new(r.into())),
        expires_at,
        scope: "read".into(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777)
}

#[test]
fn token_files_are_private_atomic_and_bound() {
    let fake = Fake::start(good);
    let dir = scratch("files");
    let path = dir.join("new/sub/token.json");
    let b = binding(&fake);
    store::write(&path, &token("a1", Some("r1"), 60), &b).expect("write");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.join("new")), 0o700);
    assert_eq!(mode(&dir.join("new/sub")), 0o700);
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("new/sub"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    let secrets = SecretLog::new();
    let read = store::read(&path, &b, &secrets)
        .expect("read")
        .expect("present");
    assert_eq!(read.access.expose(), "a1");
    assert_eq!(read.refresh.as_ref().map(Secret::expose), Some("r1"));
    assert_eq!(secrets.values().len(), 2);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let doc: Value = serde_json::from_str(&text).unwrap_or_default();
    for key in [
        "access_token",
        "refresh_token",
        "expires_at",
        "issuer",
        "resource",
        "client_id",
        "scope",
    ] {
        assert!(doc.get(key).is_some(), "{key}");
    }
    assert!(text.ends_with('\n'));
    // Bound to another issuer, resource or client: refused.
    let others = [
        Binding {
            issuer: "https://other.example".into(),
            ..b.clone()
        },
        Binding {
            resource: format!("{}/other", fake.root),
            ..b.clone()
        },
        Binding {
            client_id: "another-client".into(),
            ..b.clone()
        },
    ];
    for other in &others {
        assert_file(
            store::read(&path, other, &secrets),
            TokenFileProblem::Binding,
        );
    }
    // Readable by others: refused.
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
    assert_file(
        store::read(&path, &b, &secrets),
        TokenFileProblem::Permissions,
    );
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    // A symlink to a valid file: refused to read and to write through.
    let link = dir.join("link.json");
    let _ = std::os::unix::fs::symlink(&path, &link);
    assert_file(store::read(&link, &b, &secrets), TokenFileProblem::Symlink);
    let written = store::write(&link, &token("a2", None, 60), &b);
    assert!(matches!(
        written,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::Symlink),
            ..
        })
    ));
    // A parent others may write: refused.
    let open = dir.join("open");
    let _ = std::fs::create_dir(&open);
    let _ = std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777));
    let written = store::write(&open.join("t.json"), &token("a3", None, 60), &b);
    assert!(matches!(
        written,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::ParentWritable),
            ..
        })
    ));
    // Not ours at all.
    let junk = dir.join("junk.json");
    let _ = std::fs::write(&junk, "{}");
    let _ = std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o600));
    assert_file(
        store::read(&junk, &b, &secrets),
        TokenFileProblem::Malformed,
    );
    assert!(matches!(
        store::read(&dir.join("missing.json"), &b, &secrets),
        Ok(None)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

fn assert_file(r: Result<Option<Token>, OAuthError>, want: TokenFileProblem) {
    match r {
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(p),
            ..
        }) => assert_eq!(p, want),
        other => panic!("expected {want:?}, got {other:?}"),
    }
}

#[test]
fn a_held_lock_is_waited_for_until_the_deadline_only() {
    let dir = scratch("lock");
    let path = dir.join("token.json");
    let held = store::lock(&path, std::time::Instant::now() + LONG).expect("lock");
    let started = std::time::Instant::now();
    let second = store::lock(&path, started + Duration::from_millis(200));
    assert!(matches!(
        second,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::Locked),
            ..
        })
    ));
    assert!(started.elapsed() < Duration::from_secs(1));
    drop(held);
    assert!(store::lock(&path, std::time::Instant::now() + LONG).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

// ----------------------------------------------------------------------------------- refresh

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
    s.token_file = Some(dir.join("absent.json"));
    let (r, _) = authorize(&fake, s);
    assert!(matches!(r, Err(OAuthError::LoginRequired)), "{r:?}");
    assert!(fake.server.requests().is_empty());
    let mut s = settings(&fake, OAuthGrant::RefreshToken);
    s.refresh_token = None;
    let (r, _) = authorize(&fake, s);
    assert_eq!(step_of(&r), Some(OAuthStep::NoRefreshToken));
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

// ------------------------------------------------------------------------------------- login

/// Runs a login against the fake in a thread; the test plays the browser.
/// Runs a login against `fake` that nobody completes, with `wait` and `cancelled`; returns
/// its outcome, how long it took after printing the URL, and what it printed.
fn unattended_login(
    fake: &Fake,
    wait: Duration,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> (Result<(), String>, Duration, Vec<String>) {
    let dir = scratch("login-unattended");
    let s = public_client(fake, dir.join("user.json"));
    let endpoint = fake.endpoint();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let secrets = SecretLog::new();
    let login = super::authorization_code::AuthorizationCode {
        settings: &s,
        endpoint: &endpoint,
        secrets: &secrets,
        step_timeout: LONG,
        wait,
        cancelled,
    };
    let mut out = LineSink(tx, Vec::new());
    let started = Instant::now();
    let result = super::authorization_code::authorize(&login, &mut out)
        .map(drop)
        .map_err(|e| format!("{e:?}"));
    let took = started.elapsed();
    (result, took, rx.try_iter().collect())
}

/// Nobody comes back to the callback: the login ends when its wait does, having saved
/// nothing. (The wait itself is five minutes: [`super::authorization_code::WAIT`].)
#[test]
fn a_login_nobody_completes_ends_with_its_wait() {
    assert_eq!(super::authorization_code::WAIT, Duration::from_secs(300));
    let fake = Fake::start(good);
    let wait = Duration::from_millis(300);
    let (result, took, printed) = unattended_login(&fake, wait, &|| false);
    assert!(
        result.as_ref().is_err_and(|e| e.contains("Callback")),
        "{result:?}"
    );
    assert!(
        took >= wait && took < wait + Duration::from_secs(1),
        "{took:?}"
    );
    assert_eq!(
        printed.first().map(String::as_str),
        Some("Open this URL to authorize AgentHealth:")
    );
}

/// A cancelled login (SIGINT at the terminal) ends at once, not after its wait.
#[test]
fn a_cancelled_login_ends_without_waiting() {
    let fake = Fake::start(good);
    let (result, took, _) = unattended_login(&fake, Duration::from_secs(60), &|| true);
    assert!(result.is_err(), "{result:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn login_delivers_the_code_through_the_loopback_callback() {
    let fake = Fake::start(good);
    let dir = scratch("login");
    let path = dir.join("user.json");
    let s = public_client(&fake, path.clone());
    let endpoint = fake.endpoint();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let worker = std::thread::spawn(move || {
        let secrets = SecretLog::new();
        let login = super::authorization_code::AuthorizationCode {
            settings: &s,
            endpoint: &endpoint,
            secrets: &secrets,
            step_timeout: LONG,
            wait: Duration::from_secs(20),
            cancelled: &|| false,
        };
        let mut out = LineSink(tx, Vec::new());
        super::authorization_code::authorize(&login, &mut out)
    });
    assert_eq!(
        rx.recv_timeout(LONG).ok().as_deref(),
        Some("Open this URL to authorize AgentHealth:")
    );
    let url = rx.recv_timeout(LONG).unwrap_or_default();
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let params = url::parse_query(query);
    let get = |name: &str| value(&params, name).unwrap_or_default().to_string();
    assert_eq!(get("code_challenge_method"), "S256");
    assert_eq!(get("resource"), format!("{}/mcp", fake.root));
    assert_eq!(get("response_type"), "code");
    let redirect = get("redirect_uri");
    let port: u16 = redirect
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap_or(0);
    // A request head over the callback's 8 KiB bound, and a connection closed without a
    // byte: neither is ours, and the login keeps waiting.
    let (status, _) = callback(
        port,
        &format!("/callback?pad={}", "x".repeat(9 * 1024)),
        None,
    );
    assert_eq!(status, 404);
    drop(std::net::TcpStream::connect(("127.0.0.1", port)));
    // Someone else's callback next (wrong state): refused, the login keeps waiting.
    let iss = url::form_encode(&fake.root);
    let (status, _) = callback(
        port,
        &format!("/callback?code=x&state=wrong&iss={iss}"),
        None,
    );
    assert_eq!(status, 400);
    // The wrong Host: not ours.
    let (status, _) = callback(
        port,
        &format!("/callback?code=x&state={}&iss={iss}", get("state")),
        Some("localhost"),
    );
    assert_eq!(status, 404);
    let (status, page) = callback(
        port,
        &format!("/callback?code=the-code&state={}&iss={iss}", get("state")),
        None,
    );
    assert_eq!(status, 200);
    assert!(page.contains("You can close this window"));
    let result = worker
        .join()
        .map_err(|_| ())
        .and_then(|r| r.map_err(|_| ()));
    assert!(result.is_ok());
    assert_eq!(
        rx.recv_timeout(LONG).ok().as_deref(),
        Some("OAuth login complete; credentials saved to the configured token file.")
    );
    let form = fake.form();
    assert_eq!(value(&form, "grant_type"), Some("authorization_code"));
    assert_eq!(value(&form, "code"), Some("the-code"));
    assert_eq!(value(&form, "redirect_uri"), Some(redirect.as_str()));
    let verifier = value(&form, "code_verifier").unwrap_or_default();
    use sha2::Digest;
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(challenge, get("code_challenge"), "PKCE S256");
    assert_eq!(mode(&path), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn login_fails_on_a_wrong_issuer_without_exchanging() {
    let fake = Fake::start(good);
    let dir = scratch("login-iss");
    let mut s = settings(&fake, OAuthGrant::AuthorizationCode);
    s.token_file = Some(dir.join("user.json"));
    let endpoint = fake.endpoint();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let worker = std::thread::spawn(move || {
        let secrets = SecretLog::new();
        let login = super::authorization_code::AuthorizationCode {
            settings: &s,
            endpoint: &endpoint,
            secrets: &secrets,
            step_timeout: LONG,
            wait: Duration::from_secs(20),
            cancelled: &|| false,
        };
        super::authorization_code::authorize(&login, &mut LineSink(tx, Vec::new()))
    });
    let _ = rx.recv_timeout(LONG);
    let url = rx.recv_timeout(LONG).unwrap_or_default();
    let params = url::parse_query(url.split_once('?').map(|(_, q)| q).unwrap_or_default());
    let state = value(&params, "state").unwrap_or_default().to_string();
    let port: u16 = value(&params, "redirect_uri")
        .unwrap_or_default()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap_or(0);
    let (status, _) = callback(
        port,
        &format!("/callback?code=c&state={state}&iss=https%3A%2F%2Fevil"),
        None,
    );
    assert_eq!(status, 400);
    let result = worker.join().map_err(|_| ());
    assert!(matches!(
        result,
        Ok(Err(OAuthError::Step {
            step: OAuthStep::Callback,
            ..
        }))
    ));
    assert!(fake.requests("/token").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A writer that sends each complete line to a channel.
struct LineSink(std::sync::mpsc::Sender<String>, Vec<u8>);

impl std::io::Write for LineSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        while let Some(i) = self.1.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.1.drain(..=i).collect();
            let _ = self
                .0
                .send(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A GET to the login's callback; returns the status and body.
fn callback(port: u16, target: &str, host: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, String::new());
    };
    let _ = stream.set_read_timeout(Some(LONG));
    let host = host.map_or_else(|| format!("127.0.0.1:{port}"), |h| format!("{h}:{port}"));
    let _ = write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Under an HTTPS issuer every authorization-server endpoint is HTTPS, loopback included; a
/// loopback issuer may name plain-HTTP loopback endpoints; a plain-HTTP authorization endpoint
/// elsewhere is refused like a token endpoint.
#[test]
fn an_https_issuer_needs_https_endpoints_even_on_loopback() {
    use super::discovery::server_metadata;
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
