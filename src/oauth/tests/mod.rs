//! OAuth against a scripted protected resource and authorization server on 127.0.0.1, hostile
//! ones included: the grants a check runs ([`grants`]), every discovery rule
//! ([`discovery_rules`]), the token endpoint's answers ([`token_endpoint`]), the token file's
//! safety rules and locking ([`token_files`]), saving refreshed tokens whatever the disk does
//! ([`token_saves`]), login's callback ([`login_callback`]) and dynamic registration
//! ([`registration`]). The
//! scripted world and its helpers are here.

mod discovery_rules;
mod grants;
mod login_callback;
mod registration;
mod token_endpoint;
mod token_files;
mod token_saves;

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
use crate::config::OAuthOptions;
use crate::contract::{AuthMethod, Bound, OAuthGrant, Secret};
use crate::net::testkit::http_server::{Reply, Request as Recorded, Server};
use crate::net::testkit::{with_watchdog, within};
use crate::net::{Client, Endpoint, Reuse};
use crate::result::reason::{OAuthStep, TokenError, TokenFileProblem};
use crate::result::{Fact, Key};
use crate::runtime::sync::lock;
use crate::runtime::{Attempt, Cancel, Deadline, SecretLog};

pub(super) const LONG: Duration = Duration::from_secs(5);

/// How the fake world behaves; tests change the parts they are about.
#[derive(Clone)]
pub(super) struct World {
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
pub(super) struct Fake {
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
        crate::text::query_pairs(&String::from_utf8_lossy(&last)).unwrap_or_default()
    }
}

/// A well-behaved world: challenge with `resource_metadata` and `scope="read"`, protected
/// metadata at the path-inserted location, RFC 8414 metadata, a token answer.
pub(super) fn good(root: &str) -> World {
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

pub(super) fn token_reply(doc: Value) -> Reply {
    Reply::status(200)
        .header("Content-Type", "application/json")
        .body(doc.to_string())
}

pub(super) fn settings(fake: &Fake, grant: OAuthGrant) -> Settings {
    Settings {
        configured: OAuthOptions {
            issuer: fake.root.clone(),
            client_id: Some("registered-client".into()),
            grant,
            client_secret_env: None,
            refresh_token_env: None,
            token_file: None,
            scopes: Vec::new(),
            redirect_port: None,
            token_endpoint_auth_method: None,
        },
        client_secret: Some(Secret::new("client-secret-value".into())),
        refresh_token: None,
    }
}

pub(super) fn attempt() -> Attempt {
    Attempt::new(Deadline::after(LONG, Bound::TimeoutMs))
}

/// One `authorization()` call with a fresh authorizer.
pub(super) fn authorize(fake: &Fake, s: Settings) -> (Result<String, OAuthError>, SecretLog) {
    let secrets = SecretLog::new();
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), secrets.clone());
    let mut client = Client::new(Reuse::Fresh);
    (a.authorization(&mut client, &attempt()), secrets)
}

pub(super) fn step_of(r: &Result<String, OAuthError>) -> Option<OAuthStep> {
    match r {
        Err(OAuthError::Step { step, .. }) => Some(*step),
        _ => None,
    }
}

pub(super) fn value<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A private scratch directory (0700) under the system temporary directory.
pub(super) fn scratch(name: &str) -> PathBuf {
    let mut suffix = [0u8; 6];
    let _ = super::random::random(&mut suffix);
    let hex: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("agenthealth-oauth-{name}-{hex}"));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    dir
}

/// A public client (no secret) of `fake` that logs in and keeps its tokens in `token_file`.
pub(super) fn public_client(fake: &Fake, token_file: PathBuf) -> Settings {
    let mut s = settings(fake, OAuthGrant::AuthorizationCode);
    s.client_secret = None;
    s.configured.token_file = Some(token_file.display().to_string());
    s
}

pub(super) fn binding(fake: &Fake) -> Binding {
    Binding {
        issuer: fake.root.clone(),
        resource: format!("{}/mcp", fake.root),
        client_id: Some("registered-client".into()),
    }
}

pub(super) fn token(access: &str, refresh: Option<&str>, expires_in: i64) -> Token {
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
        method: None,
        registered: None,
        resource: String::new(),
    }
}

pub(super) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777)
}

pub(super) fn assert_file(r: Result<Option<Token>, OAuthError>, want: TokenFileProblem) {
    match r {
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(p),
            ..
        }) => assert_eq!(p, want),
        other => panic!("expected {want:?}, got {other:?}"),
    }
}
