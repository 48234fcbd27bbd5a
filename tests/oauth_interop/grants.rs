//! The grants a check runs by itself against the lab: `client_credentials` (Basic and post),
//! `refresh_token` from the environment, secrets that need form encoding, which scope is
//! asked for, and an issuer with a path.

use crate::interop::oauth::{
    AsOptions, AuthServer, BASIC, BOTH_RS, NATIVE, ODD, POST, ProtectedServer, Rs,
};
use crate::util::TempDir;

use super::harness::*;

/// `client_credentials` with `client_secret_basic`, in both eras against both protected
/// servers: HEALTHY, exactly one token request per run (Basic, for the MCP resource), no
/// secret or token in the output.
#[test]
fn client_credentials_with_basic_in_both_eras_against_both_servers() {
    let lab = AuthServer::start(AsOptions::default());
    for rs in BOTH_RS {
        let server = ProtectedServer::start(rs, lab.issuer());
        for (revision, era) in ERAS {
            let what = format!("{rs:?} {era}");
            lab.reset_log();
            let dir = TempDir::new("oauth-cc-basic");
            let target =
                Target::client_credentials(server.url(), lab.issuer(), BASIC).revision(revision);
            let o = check(&write_config(&dir, &[&target]), &lab_env(BASIC, None));
            assert_healthy(&o, Some(era), &what);
            let requests = token_requests(&lab, "client_credentials");
            assert_eq!(requests.len(), 1, "{what}: one token per run: {requests:?}");
            assert_eq!(requests[0]["auth_method"], "client_secret_basic", "{what}");
            assert_eq!(requests[0]["client_id"], BASIC.id, "{what}");
            assert_eq!(
                requests[0]["resource"],
                serde_json::json!([server.url()]),
                "{what}"
            );
            assert_eq!(requests[0]["status"], 200, "{what}: {requests:?}");
            assert!(lab.log().refused().is_empty(), "{what}");
            assert_no_secrets(&o, &lab, &[], &what);
        }
    }
}

/// `client_secret_post`, chosen from the metadata when the authorization server
/// advertises only post (it refuses Basic), in both eras against both servers.
#[test]
fn client_credentials_with_post_when_only_post_is_advertised() {
    let lab = AuthServer::start(AsOptions {
        auth_methods: Some(&["client_secret_post", "none"]),
        ..AsOptions::default()
    });
    for rs in BOTH_RS {
        let server = ProtectedServer::start(rs, lab.issuer());
        for (revision, era) in ERAS {
            let what = format!("{rs:?} {era}");
            lab.reset_log();
            let dir = TempDir::new("oauth-cc-post");
            let target =
                Target::client_credentials(server.url(), lab.issuer(), POST).revision(revision);
            let o = check(&write_config(&dir, &[&target]), &lab_env(POST, None));
            assert_healthy(&o, Some(era), &what);
            let requests = token_requests(&lab, "client_credentials");
            assert_eq!(requests.len(), 1, "{what}: {requests:?}");
            assert_eq!(requests[0]["auth_method"], "client_secret_post", "{what}");
            assert!(
                lab.log().refused().is_empty(),
                "{what}: {:?}",
                lab.log().refused()
            );
            assert_no_secrets(&o, &lab, &[], &what);
        }
    }
}

/// `grant: refresh_token` with `refresh_token_env` (a refresh token from a login of our
/// own), public client, in both eras against both servers: HEALTHY with one refresh for
/// the MCP resource; the refresh token never in the output.
#[test]
fn refresh_token_from_the_environment_in_both_eras_against_both_servers() {
    let lab = AuthServer::start(AsOptions::default());
    for rs in BOTH_RS {
        let server = ProtectedServer::start(rs, lab.issuer());
        for (revision, era) in ERAS {
            let what = format!("{rs:?} {era}");
            let redirect = format!("http://127.0.0.1:{}/callback", free_port());
            let refresh = refresh_token_of(&lab.login(NATIVE, &redirect, server.url(), "read"));
            lab.reset_log();
            let dir = TempDir::new("oauth-rt-env");
            let mut target =
                Target::new("lab", server.url(), lab.issuer(), NATIVE, "refresh_token")
                    .revision(revision);
            target.refresh_env = true;
            let o = check(
                &write_config(&dir, &[&target]),
                &lab_env(NATIVE, Some(&refresh)),
            );
            assert_healthy(&o, Some(era), &what);
            let requests = token_requests(&lab, "refresh_token");
            assert_eq!(requests.len(), 1, "{what}: {requests:?}");
            assert_eq!(requests[0]["status"], 200, "{what}: {requests:?}");
            assert_eq!(requests[0]["auth_method"], "none", "{what}");
            assert_eq!(
                requests[0]["resource"],
                serde_json::json!([server.url()]),
                "{what}"
            );
            assert_no_secrets(&o, &lab, &[&refresh], &what);
        }
    }
}

/// A secret holding `%`, `+`, `:` and a space, with Basic: HEALTHY, so it was form-encoded
/// before the Basic header (the lab refuses it raw), and in no form in the output.
#[test]
fn a_secret_with_percent_plus_colon_and_space_works_with_basic() {
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Ts2, lab.issuer());
    let dir = TempDir::new("oauth-odd");
    let target = Target::client_credentials(server.url(), lab.issuer(), ODD);
    let config = write_config(&dir, &[&target]);
    for format in ["json", "yaml", "terminal"] {
        lab.reset_log();
        let o = run_with(
            &["check", config.to_str().unwrap(), "--format", format],
            &lab_env(ODD, None),
        );
        assert_eq!(o.code, 0, "{format}: {}\n{}", o.stdout, o.stderr);
        let requests = token_requests(&lab, "client_credentials");
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0]["auth_method"], "client_secret_basic");
        assert_eq!(requests[0]["status"], 200, "{requests:?}");
        assert_no_secrets(&o, &lab, &[], format);
    }
}

/// Scope precedence: with no configured scopes, the TS server's challenge (`scope="read"`)
/// wins over its metadata (`read write`); the Python server's challenge names none, so its
/// metadata (`read`) is used; configured scopes override both.
#[test]
fn the_challenged_scope_beats_the_metadata_and_configured_scopes_beat_both() {
    let lab = AuthServer::start(AsOptions::default());
    let supported: &[&str] = &["read", "write"];
    let ts = ProtectedServer::start_with(Rs::Ts2, lab.issuer(), &["read"], Some(supported));
    let py = ProtectedServer::start(Rs::Py, lab.issuer());
    let cases: [(&ProtectedServer, &[&'static str], &str); 3] = [
        (&ts, &[], "read"),
        (&py, &[], "read"),
        (&ts, &["read", "write"], "read write"),
    ];
    for (server, configured, expected) in cases {
        let what = format!("{:?} configured {configured:?}", server.rs());
        lab.reset_log();
        let dir = TempDir::new("oauth-scope");
        let target =
            Target::client_credentials(server.url(), lab.issuer(), BASIC).scopes(configured);
        let o = check(&write_config(&dir, &[&target]), &lab_env(BASIC, None));
        assert_healthy(&o, None, &what);
        let requests = token_requests(&lab, "client_credentials");
        assert_eq!(requests.len(), 1, "{what}: {requests:?}");
        assert_eq!(requests[0]["scope"], expected, "{what}");
    }
}

/// An issuer with a path (`…/tenant`): its RFC 8414 path-inserted metadata location is 404,
/// the OpenID Connect location under the issuer answers, and the target is HEALTHY.
#[test]
fn an_issuer_with_a_path_is_found_through_openid_discovery() {
    let lab = AuthServer::start(AsOptions {
        issuer_path: Some("/tenant"),
        ..AsOptions::default()
    });
    for rs in BOTH_RS {
        let server = ProtectedServer::start(rs, lab.issuer());
        let what = format!("{rs:?}");
        lab.reset_log();
        let dir = TempDir::new("oauth-path-issuer");
        let target = Target::client_credentials(server.url(), lab.issuer(), BASIC);
        let o = check(&write_config(&dir, &[&target]), &lab_env(BASIC, None));
        assert_healthy(&o, None, &what);
        let log = lab.log();
        assert!(
            log.count("GET", "/.well-known/oauth-authorization-server/tenant") >= 1,
            "{what}: RFC 8414 location first: {:?}",
            log.requests()
        );
        assert!(
            log.count("GET", "/tenant/.well-known/openid-configuration") >= 1,
            "{what}: then OpenID Connect discovery: {:?}",
            log.requests()
        );
        assert_eq!(
            token_requests(&lab, "client_credentials").len(),
            1,
            "{what}"
        );
    }
}
