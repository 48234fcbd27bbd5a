//! `agenthealth login CONFIG TARGET --register` (RFC 7591) against the real registration
//! endpoints, the client it saves with the tokens, and checks that use it: the Python SDK's
//! authorization server (confidential clients by default: it lists no `none`) and
//! oidc-provider with open registration (a public native client).

use crate::interop::oauth::{
    AsOptions, AuthServer, ProtectedServer, Rs, SDK_PUBLIC, SdkAsOptions, SdkAuthServer,
};
use crate::util::TempDir;
use agenthealth_testkit::oauth_browser::Decision;

use super::harness::*;

/// The lines `login --register` prints before the URL: the public client id, never a
/// secret.
fn registered_id(stdout: &str) -> Option<String> {
    stdout.lines().find_map(|l| {
        l.strip_prefix("Registered client ")
            .and_then(|rest| rest.split(" at ").next())
            .map(str::to_owned)
    })
}

/// At the Python SDK's server: `--register` registers a native client of the loopback
/// callback with a method the server lists (Basic: it lists no `none`), prints its id, logs
/// in with it and saves it with the tokens; the check then uses the saved client (the
/// configuration names none), refreshes with it once the access token expired, and the
/// issued secret appears in no output. A plain `login` later reuses the saved registration.
#[test]
fn register_then_login_then_checks_use_the_saved_client_at_the_python_sdk_server() {
    let lab = SdkAuthServer::start(SdkAsOptions::default());
    let dir = TempDir::new("sdk-register");
    let token_file = dir.0.join("tokens/sdk.json");
    let mut target = Target::login(lab.url(), lab.issuer(), SDK_PUBLIC, &token_file);
    target.register = true;
    let config = write_config(&dir, &[&target]);
    let done = login_registering(&config, "lab", &[], Decision::Approve);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let id = registered_id(&done.stdout).expect("the registered client id is printed");
    let log = lab.log();
    let registrations = log.registrations();
    assert_eq!(registrations.len(), 1, "{registrations:?}");
    assert_eq!(registrations[0]["client_id"], id.as_str());
    assert_eq!(registrations[0]["application_type"], "native");
    assert_eq!(
        registrations[0]["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    assert_eq!(
        registrations[0]["grant_types"],
        serde_json::json!(["authorization_code", "refresh_token"])
    );
    let saved = saved_file(&token_file);
    assert_eq!(saved["client_id"], id.as_str());
    assert_eq!(saved["registered"], true);
    assert_eq!(saved["token_endpoint_auth_method"], "client_secret_basic");
    assert!(saved["client_secret"].is_string());
    assert_eq!(mode(&token_file), 0o600);
    assert_no_secrets(&done.outcome(), &lab, &[], "register");

    let o = check(&config, &[]);
    assert_healthy(&o, None, "with the saved client");
    expire_saved_token(&token_file);
    lab.reset_log();
    let o = check(&config, &[]);
    assert_healthy(&o, None, "refreshed with the saved client");
    let refreshes = token_requests(&lab, "refresh_token");
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(refreshes[0]["auth_method"], "client_secret_basic");
    assert_eq!(refreshes[0]["client_id_in_body"], id.as_str());
    assert_eq!(refreshes[0]["status"], 200, "{refreshes:?}");
    assert_no_secrets(&o, &lab, &[], "refresh");

    // A plain login reuses the saved registration and its exact redirect.
    let again = login(&config, "lab", &[], Decision::Approve);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(registered_id(&again.stdout).is_none(), "{}", again.stdout);
    assert_eq!(lab.log().registrations().len(), 0, "no second registration");
}

/// oidc-provider with open registration lists `none`: `--register` gets a public native
/// client (no secret), and the check is HEALTHY with it.
#[test]
fn register_gets_a_public_native_client_where_none_is_listed() {
    let lab = AuthServer::start(AsOptions {
        registration: true,
        ..AsOptions::default()
    });
    let server = ProtectedServer::start(Rs::Ts2, lab.issuer());
    let dir = TempDir::new("oidc-register");
    let token_file = dir.0.join("tokens/oidc.json");
    let mut target = Target::login(server.url(), lab.issuer(), SDK_PUBLIC, &token_file);
    target.register = true;
    let config = write_config(&dir, &[&target]);
    let done = login_registering(&config, "lab", &[], Decision::Approve);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let log = lab.log();
    assert_eq!(log.registrations().len(), 1);
    assert_eq!(log.registrations()[0]["token_endpoint_auth_method"], "none");
    assert_eq!(log.registrations()[0]["application_type"], "native");
    assert_healthy(&check(&config, &[]), None, "public registered client");
}
