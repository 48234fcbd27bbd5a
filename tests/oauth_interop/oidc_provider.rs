//! oidc-provider run with its own policies instead of the lab's conveniences: pushed
//! authorization requests required, refresh tokens only for a consented `offline_access`,
//! open dynamic registration.

use crate::interop::oauth::{AsOptions, AuthServer, NATIVE, ProtectedServer, Rs};
use crate::util::TempDir;
use agenthealth_testkit::oauth_browser::Decision;
use agenthealth_testkit::oauth_http;

use super::harness::*;

/// `require_pushed_authorization_requests`: a plain authorization request is refused there,
/// so login pushes its parameters first (RFC 9126) and prints the authorization endpoint with
/// only `client_id` and the `request_uri`; the login completes and the check is HEALTHY.
#[test]
fn login_pushes_its_authorization_request_where_the_server_requires_it() {
    let lab = AuthServer::start(AsOptions {
        par_required: true,
        ..AsOptions::default()
    });
    let server = ProtectedServer::start(Rs::Ts2, lab.issuer());
    let dir = TempDir::new("oauth-par");
    let token_file = dir.0.join("tokens/par.json");
    let target = Target::login(server.url(), lab.issuer(), NATIVE, &token_file);
    let config = write_config(&dir, &[&target]);
    let done = login(&config, "lab", &[], Decision::Approve);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let param = |name| oauth_http::query_param(&done.url, name);
    assert!(
        param("request_uri").is_some_and(|u| u.starts_with("urn:")),
        "{}",
        done.url
    );
    assert_eq!(param("client_id").as_deref(), Some(NATIVE.id));
    assert_eq!(param("code_challenge"), None, "pushed, not in the URL");
    assert_eq!(done.callback_status, 200, "{}", done.callback_body);
    assert_eq!(lab.log().par_requests(), 1);
    assert_healthy(&check(&config, &[]), None, "after a pushed login");
    assert_no_secrets(&done.outcome(), &lab, &[], "PAR login");
}

/// oidc-provider's own refresh-token policy issues one only for a consented
/// `offline_access`: login asks for it (the issuer lists it) with `prompt=consent`, so a
/// refresh token is saved, and once the access token expired the check refreshes: HEALTHY
/// with exactly one refresh, for the resource, without `offline_access`.
#[test]
fn a_refresh_token_is_saved_under_the_stock_refresh_policy_and_used() {
    let lab = AuthServer::start(AsOptions {
        stock_refresh_policy: true,
        ..AsOptions::default()
    });
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let dir = TempDir::new("oauth-stock");
    let token_file = dir.0.join("tokens/stock.json");
    let target = Target::login(server.url(), lab.issuer(), NATIVE, &token_file);
    let config = write_config(&dir, &[&target]);
    let done = login(&config, "lab", &[], Decision::Approve);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let param = |name| oauth_http::query_param(&done.url, name);
    assert_eq!(param("scope").as_deref(), Some("read offline_access"));
    assert_eq!(param("prompt").as_deref(), Some("consent"));
    let saved = saved_file(&token_file);
    assert!(saved["refresh_token"].is_string(), "no refresh token saved");
    expire_saved_token(&token_file);
    lab.reset_log();
    assert_healthy(&check(&config, &[]), None, "after the refresh");
    let refreshes = token_requests(&lab, "refresh_token");
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(refreshes[0]["status"], 200, "{refreshes:?}");
    assert_eq!(refreshes[0]["resource"], serde_json::json!([server.url()]));
    assert!(
        !refreshes[0]["scope"]
            .as_str()
            .unwrap_or_default()
            .contains("offline_access"),
        "{refreshes:?}"
    );
    assert_no_secrets(&done.outcome(), &lab, &[], "stock login");
}

/// The same policy with scopes configured without `offline_access`: they are used as
/// configured, so the server issues no refresh token; login's last line says so and what to
/// do, and once the access token expired the check is `mcp_login` with `login=expired` (not
/// "no saved credentials"), with doctor advice that names offline_access, and no token
/// request is made.
#[test]
fn without_offline_access_login_says_no_refresh_token_and_expiry_is_login_expired() {
    let lab = AuthServer::start(AsOptions {
        stock_refresh_policy: true,
        ..AsOptions::default()
    });
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let dir = TempDir::new("oauth-stock-no-offline");
    let token_file = dir.0.join("tokens/stock.json");
    let target = Target::login(server.url(), lab.issuer(), NATIVE, &token_file).scopes(&["read"]);
    let config = write_config(&dir, &[&target]);
    let done = login(&config, "lab", &[], Decision::Approve);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    assert_eq!(
        oauth_http::query_param(&done.url, "scope").as_deref(),
        Some("read")
    );
    assert!(
        done.stdout.contains(
            "the authorization server issued no refresh token: log in again (`agenthealth login CONFIG TARGET`), or ask for offline_access (add it to mcp.oauth.scopes)."
        ),
        "{}",
        done.stdout
    );
    let saved = saved_file(&token_file);
    assert!(
        saved.get("refresh_token").is_none_or(|r| r.is_null()),
        "{saved}"
    );
    assert_healthy(&check(&config, &[]), None, "before expiry");
    expire_saved_token(&token_file);
    lab.reset_log();
    let o = check(&config, &[]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    let doc = o.json();
    assert_eq!(doc["checks"]["protocol"]["code"], "mcp_login", "{doc}");
    assert_eq!(
        evidence(&doc, "authentication")["login"],
        "expired",
        "{doc}"
    );
    assert!(token_requests(&lab, "refresh_token").is_empty());
    let advice = doctor(&config, &[]);
    assert!(
        advice.stdout.contains("the saved access token expired")
            && advice.stdout.contains("offline_access")
            && !advice.stdout.contains("no saved credentials"),
        "{}",
        advice.stdout
    );
    assert_no_secrets(&done.outcome(), &lab, &[], "login without offline_access");
}
