//! Against the authorization server MCP server authors build on the Python `mcp` SDK's
//! `mcp.server.auth` routes (tests/interop/servers/py_sdk_as.py): confidential clients with
//! Basic and with post, the public client, the choice of method and what doctor says when
//! it is the wrong one.

use crate::interop::oauth::{SDK_BASIC, SDK_POST, SDK_PUBLIC, SdkAsOptions, SdkAuthServer};
use crate::util::TempDir;
use agenthealth_testkit::oauth_browser::Decision;

use super::harness::*;

fn with_client_credentials() -> SdkAuthServer {
    SdkAuthServer::start(SdkAsOptions {
        client_credentials: true,
        ..SdkAsOptions::default()
    })
}

/// `client_secret_basic`, chosen from the metadata, in both eras: HEALTHY, because
/// `client_id` is in the form body too (the SDK's authenticator answers `401 invalid_client
/// "Missing client_id"` to Basic alone); the evidence names the method and the other one the
/// server lists.
#[test]
fn basic_carries_the_client_id_in_the_body_too() {
    let lab = with_client_credentials();
    for (revision, era) in ERAS {
        lab.reset_log();
        let dir = TempDir::new("sdk-basic");
        let target =
            Target::client_credentials(lab.url(), lab.issuer(), SDK_BASIC).revision(revision);
        let o = check(&write_config(&dir, &[&target]), &lab_env(SDK_BASIC, None));
        assert_healthy(&o, Some(era), era);
        let requests = token_requests(&lab, "client_credentials");
        assert_eq!(requests.len(), 1, "{era}: {requests:?}");
        assert_eq!(requests[0]["auth_method"], "client_secret_basic");
        assert_eq!(requests[0]["client_id_in_body"], SDK_BASIC.id);
        assert_eq!(requests[0]["resource"], serde_json::json!([lab.url()]));
        let facts = evidence(&o.json(), "authentication").clone();
        assert_eq!(facts["auth_method"], "client_secret_basic", "{facts}");
        assert_eq!(facts["auth_method_alternative"], "client_secret_post");
        assert_no_secrets(&o, &lab, &[], era);
    }
}

/// A client registered for `client_secret_post` at a server that lists both methods and
/// enforces the registered one: sent as Basic (the automatic choice) it is refused, and
/// doctor says to configure post rather than to check a secret that is right; configured
/// `token_endpoint_auth_method: client_secret_post`, it is HEALTHY.
#[test]
fn a_post_client_needs_its_method_configured_and_doctor_says_so() {
    let lab = with_client_credentials();
    let dir = TempDir::new("sdk-post");
    let automatic = Target::client_credentials(lab.url(), lab.issuer(), SDK_POST);
    let config = write_config(&dir, &[&automatic]);
    let env = lab_env(SDK_POST, None);
    let o = check(&config, &env);
    assert_eq!(o.code, 4, "{}", o.stdout);
    let facts = evidence(&o.json(), "authentication").clone();
    assert_eq!(facts["oauth"], "token_endpoint", "{facts}");
    assert_eq!(facts["oauth_error"], "invalid_client", "{facts}");
    assert_eq!(facts["auth_method"], "client_secret_basic", "{facts}");
    assert_eq!(facts["auth_method_alternative"], "client_secret_post");
    let advice = doctor(&config, &env);
    assert!(
        advice
            .stdout
            .contains("set mcp.oauth.token_endpoint_auth_method: client_secret_post"),
        "{}",
        advice.stdout
    );
    assert!(
        advice
            .stdout
            .contains("refused the client with client_secret_basic (invalid_client)"),
        "{}",
        advice.stdout
    );
    assert_no_secrets(&advice, &lab, &[], "doctor");

    lab.reset_log();
    let configured = automatic.auth_method("client_secret_post");
    let o = check(&write_config(&dir, &[&configured]), &env);
    assert_healthy(&o, None, "configured post");
    let requests = token_requests(&lab, "client_credentials");
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["auth_method"], "client_secret_post");
    assert_eq!(
        evidence(&o.json(), "authentication")["auth_method"],
        "client_secret_post"
    );
    assert_no_secrets(&o, &lab, &[], "configured post");
}

/// The public client at a server whose metadata lists only confidential methods: login
/// refuses it before the browser (MISCONFIGURED-like `auth_method`, no token request);
/// with `token_endpoint_auth_method: none` said explicitly, login works and so does the
/// check, through a refresh once the access token expired.
#[test]
fn a_public_client_needs_none_said_explicitly_where_only_confidential_methods_are_listed() {
    let lab = SdkAuthServer::start(SdkAsOptions::default());
    let dir = TempDir::new("sdk-public");
    let token_file = dir.0.join("tokens/sdk.json");
    let implicit = Target::login(lab.url(), lab.issuer(), SDK_PUBLIC, &token_file);
    let config = write_config(&dir, &[&implicit]);
    let refused = login(&config, "lab", &[], Decision::Approve);
    assert_eq!(refused.code, 6, "{}{}", refused.stdout, refused.stderr);
    assert!(refused.url.is_empty(), "no browser: {}", refused.stdout);
    assert!(
        refused.stderr.contains("(auth_method)"),
        "{}",
        refused.stderr
    );
    assert!(lab.log().token_requests().is_empty());

    let explicit = implicit.auth_method("none");
    let config = write_config(&dir, &[&explicit]);
    let done = login(&config, "lab", &[], Decision::Approve);
    done.assert_success(lab.url(), "explicit none");
    let o = check(&config, &[]);
    assert_healthy(&o, None, "after login");
    expire_saved_token(&token_file);
    let o = check(&config, &[]);
    assert_healthy(&o, None, "after a refresh");
    let refreshes = token_requests(&lab, "refresh_token");
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(refreshes[0]["status"], 200, "{refreshes:?}");
    assert_eq!(refreshes[0]["auth_method"], "none");
    assert_no_secrets(&o, &lab, &[], "public");
    assert_no_secrets(&done.outcome(), &lab, &[], "public login");
}

/// First contact: `doctor mcp URL` on a server that challenges with `resource_metadata` says
/// it uses OAuth and how to see its details; with `--oauth-details` it prints the block to
/// paste, the issuer byte for byte as its metadata names it (trailing slash included), and
/// that it registers clients. The JSON document carries none of it.
#[test]
fn first_contact_names_the_oauth_details_command_and_the_flag_prints_the_block() {
    let lab = SdkAuthServer::start(SdkAsOptions::default());
    let plain = run_with(&["doctor", "mcp", lab.url()], &[]);
    assert_eq!(plain.code, 4, "{}", plain.stdout);
    assert!(
        plain
            .stdout
            .contains("run `agenthealth doctor mcp URL --oauth-details`"),
        "{}",
        plain.stdout
    );
    assert!(!plain.stdout.contains(lab.issuer()), "{}", plain.stdout);
    let detailed = run_with(&["doctor", "mcp", lab.url(), "--oauth-details"], &[]);
    assert_eq!(detailed.code, 4, "{}", detailed.stdout);
    let issuer_line = format!("          issuer: '{}'\n", lab.issuer());
    for expected in [
        issuer_line.as_str(),
        "          grant: authorization_code\n",
        "          token_file: .credentials/doctor.json\n",
        "          scopes: ['read']\n",
        "it registers clients dynamically: run `agenthealth login CONFIG TARGET --register`",
    ] {
        assert!(
            detailed.stdout.contains(expected),
            "{expected}\n{}",
            detailed.stdout
        );
    }
    assert!(
        !detailed.stdout.contains("client_id"),
        "{}",
        detailed.stdout
    );
    let json = run_with(
        &[
            "doctor",
            "mcp",
            lab.url(),
            "--oauth-details",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(!json.stdout.contains(lab.issuer()), "{}", json.stdout);
}

/// A saved access token the server then revokes (the SDK's opaque tokens die at once): the
/// check sends it as saved (`token_source=file`), is refused with 401, and doctor says to
/// log in again rather than to check the audience or scopes.
#[test]
fn a_revoked_saved_token_says_log_in_again() {
    let lab = SdkAuthServer::start(SdkAsOptions::default());
    let dir = TempDir::new("sdk-revoked");
    let token_file = dir.0.join("tokens/sdk.json");
    let target =
        Target::login(lab.url(), lab.issuer(), SDK_PUBLIC, &token_file).auth_method("none");
    let config = write_config(&dir, &[&target]);
    let done = login(&config, "lab", &[], Decision::Approve);
    done.assert_success(lab.url(), "login");
    assert_healthy(&check(&config, &[]), None, "before the revocation");
    lab.revoke_all();
    let o = check(&config, &[]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    let facts = evidence(&o.json(), "authentication").clone();
    assert_eq!(facts["token_source"], "file", "{facts}");
    assert_eq!(facts["http_status"], 401, "{facts}");
    let advice = doctor(&config, &[]);
    assert!(
        advice.stdout.contains("refused the saved access token")
            && advice.stdout.contains("log in again")
            && !advice.stdout.contains("audience"),
        "{}",
        advice.stdout
    );
    assert_no_secrets(&o, &lab, &[], "revoked");
}
