//! `agenthealth login` (authorization code with PKCE, through the scripted browser) and what
//! checks do with the tokens it saves: reuse, refresh and rotation, concurrent refreshes,
//! scopes, a denied login, and no token in any output.

use std::thread;

use crate::interop::oauth::{
    AsOptions, AuthServer, BASIC, BOTH_RS, NATIVE, ProtectedServer, Rs, WEB, WEB_REDIRECT,
};
use crate::util::TempDir;
use agenthealth_testkit::oauth_browser::Decision;
use agenthealth_testkit::oauth_http;

use super::harness::*;

/// Login through the scripted browser (public native client, ephemeral callback port),
/// against both servers; before it, a check is MISCONFIGURED `mcp_login` (checks never log
/// in); after it, the token file is 0600 in a new 0700 directory and checks in both eras
/// are HEALTHY reusing the saved token (no further token request).
#[test]
fn login_then_check_reuses_the_saved_token_in_both_eras() {
    let lab = AuthServer::start(AsOptions::default());
    for rs in BOTH_RS {
        let server = ProtectedServer::start(rs, lab.issuer());
        let what = format!("{rs:?}");
        lab.reset_log();
        let dir = TempDir::new("oauth-login");
        let token_file = dir.0.join("credentials/lab.json");
        let target = Target::login(server.url(), lab.issuer(), NATIVE, &token_file);
        let config = write_config(&dir, &[&target]);

        let before = check(&config, &[]);
        assert_eq!(before.code, 4, "{what}: {}", before.stdout);
        assert!(
            codes(&before.json()).contains(&"mcp_login".to_owned()),
            "{what}: {}",
            before.stdout
        );
        assert!(
            lab.log().token_requests().is_empty(),
            "{what}: checks never log in"
        );

        let login = login(&config, "lab", &[], Decision::Approve);
        login.assert_success(server.url(), &what);
        assert_no_secrets(&login.outcome(), &lab, &[], &what);
        assert_eq!(mode(&token_file), 0o600, "{what}: token file");
        assert_eq!(
            mode(token_file.parent().unwrap()),
            0o700,
            "{what}: new parent"
        );
        let codes_exchanged = token_requests(&lab, "authorization_code");
        assert_eq!(codes_exchanged.len(), 1, "{what}: {codes_exchanged:?}");
        assert_eq!(
            codes_exchanged[0]["status"], 200,
            "{what}: {codes_exchanged:?}"
        );
        assert_eq!(codes_exchanged[0]["auth_method"], "none", "{what}");

        for (revision, era) in ERAS {
            let pinned =
                Target::login(server.url(), lab.issuer(), NATIVE, &token_file).revision(revision);
            let dir = TempDir::new("oauth-login-check");
            let o = check(&write_config(&dir, &[&pinned]), &[]);
            assert_healthy(&o, Some(era), &format!("{what} {era}"));
            assert_no_secrets(&o, &lab, &[], &what);
        }
        let log = lab.log();
        assert_eq!(
            log.token_requests().len(),
            1,
            "{what}: the saved token is reused: {:?}",
            log.token_requests()
        );
    }
}

/// The confidential web client on its one registered redirect (`redirect_port: 8765`)
/// with `client_secret_env`: the code exchange authenticates with Basic; then HEALTHY.
#[test]
fn login_with_the_confidential_web_client_on_its_registered_port() {
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Ts2, lab.issuer());
    assert!(
        std::net::TcpListener::bind("127.0.0.1:8765").is_ok(),
        "127.0.0.1:8765 is taken: the lab's web client is registered for exactly {WEB_REDIRECT}"
    );
    let dir = TempDir::new("oauth-web");
    let token_file = dir.0.join("web.json");
    let mut target = Target::login(server.url(), lab.issuer(), WEB, &token_file);
    target.redirect_port = Some(8765);
    let config = write_config(&dir, &[&target]);
    let env = lab_env(WEB, None);
    let login = login(&config, "lab", &env, Decision::Approve);
    login.assert_success(server.url(), "web client");
    assert_eq!(
        oauth_http::query_param(&login.url, "redirect_uri").as_deref(),
        Some(WEB_REDIRECT)
    );
    let exchanged = token_requests(&lab, "authorization_code");
    assert_eq!(exchanged.len(), 1, "{exchanged:?}");
    assert_eq!(exchanged[0]["auth_method"], "client_secret_basic");
    assert_eq!(exchanged[0]["status"], 200, "{exchanged:?}");
    let o = check(&config, &env);
    assert_healthy(&o, None, "web client check");
    assert_no_secrets(&o, &lab, &[], "web client check");
    assert_no_secrets(&login.outcome(), &lab, &[], "web client login");
}

/// The lab user denies: the callback carries `error=access_denied`; login exits 6 with one
/// line (`OAuth login failed …; verify issuer, client registration, callback and token file
/// configuration`), saves nothing, and no code is exchanged.
#[test]
fn a_denied_login_exits_6_and_saves_nothing() {
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let dir = TempDir::new("oauth-deny");
    let token_file = dir.0.join("lab.json");
    let config = write_config(
        &dir,
        &[&Target::login(
            server.url(),
            lab.issuer(),
            NATIVE,
            &token_file,
        )],
    );
    let login = login(&config, "lab", &[], Decision::Deny);
    assert_eq!(
        login.code, 6,
        "stdout: {}\nstderr: {}",
        login.stdout, login.stderr
    );
    // One line; the implementation may name the failed step, e.g. `(callback)`.
    assert_eq!(login.stderr.trim().lines().count(), 1, "{}", login.stderr);
    assert!(
        login.stderr.contains("OAuth login failed") && login.stderr.contains(LOGIN_ADVICE),
        "{}",
        login.stderr
    );
    assert!(!login.stdout.contains(LOGIN_DONE), "{}", login.stdout);
    assert!(!token_file.exists(), "nothing saved");
    assert!(token_requests(&lab, "authorization_code").is_empty());
}

/// Refresh after a short access-token lifetime (4 s): each check after expiry refreshes
/// with the saved refresh token, the token file is rewritten (0600) holding the rotated
/// refresh token and no longer the old one, and the next refresh with it succeeds — a
/// rotated token that was not persisted would be a reuse, which revokes the grant. Python
/// server in the modern era, TS server in the legacy era.
///
/// A run may refresh more than once (a 4 s token can be inside the implementation's
/// reacquire-before-expiry margin from the start); every refresh must succeed. The token
/// file is read as text: it holds the refresh token as issued (upstream's JSON format).
#[test]
fn refresh_after_expiry_persists_the_rotated_refresh_token() {
    let lab = AuthServer::start(AsOptions {
        access_token_ttl: Some(SHORT_TTL),
        ..AsOptions::default()
    });
    for (rs, (revision, era)) in [(Rs::Py, ERAS[0]), (Rs::Ts2, ERAS[1])] {
        let server = ProtectedServer::start(rs, lab.issuer());
        let what = format!("{rs:?} {era}");
        lab.reset_log();
        let dir = TempDir::new("oauth-refresh");
        let token_file = dir.0.join("lab.json");
        let target =
            Target::login(server.url(), lab.issuer(), NATIVE, &token_file).revision(revision);
        let config = write_config(&dir, &[&target]);
        login(&config, "lab", &[], Decision::Approve).assert_success(server.url(), &what);
        let mut previous = token_requests(&lab, "authorization_code")[0]["refresh_token"]
            .as_str()
            .expect("login refresh token")
            .to_owned();
        for round in 1..=2 {
            thread::sleep(PAST_SHORT_TTL);
            let o = check(&config, &[]);
            assert_healthy(&o, Some(era), &format!("{what} round {round}"));
            assert_no_secrets(&o, &lab, &[], &what);
            let refreshes = token_requests(&lab, "refresh_token");
            assert!(
                refreshes.len() >= round,
                "{what} round {round}: {refreshes:?}"
            );
            let last = refreshes.last().unwrap();
            assert_eq!(last["status"], 200, "{what} round {round}: {refreshes:?}");
            assert_eq!(
                last["resource"],
                serde_json::json!([server.url()]),
                "{what}"
            );
            let rotated = last["refresh_token"].as_str().expect("rotated").to_owned();
            assert_ne!(rotated, previous, "{what}: the lab rotates");
            let saved = std::fs::read_to_string(&token_file).unwrap();
            assert!(
                saved.contains(&rotated),
                "{what}: rotated token not persisted"
            );
            assert!(!saved.contains(&previous), "{what}: old refresh token kept");
            assert_eq!(mode(&token_file), 0o600, "{what}");
            previous = rotated;
        }
        assert!(
            lab.log().errors().is_empty(),
            "{what}: {:?}",
            lab.log().errors()
        );
    }
}

/// Two `check` runs at once on one token file whose access token has expired: both
/// HEALTHY, no refresh token used twice (the lab answers a reuse with `invalid_grant` and
/// revokes the grant), and a later check after another expiry still refreshes fine.
#[test]
fn concurrent_checks_sharing_a_token_file_never_reuse_a_refresh_token() {
    let lab = AuthServer::start(AsOptions {
        access_token_ttl: Some(SHORT_TTL),
        ..AsOptions::default()
    });
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let dir = TempDir::new("oauth-concurrent");
    let token_file = dir.0.join("shared.json");
    let config = write_config(
        &dir,
        &[&Target::login(
            server.url(),
            lab.issuer(),
            NATIVE,
            &token_file,
        )],
    );
    login(&config, "lab", &[], Decision::Approve).assert_success(server.url(), "login");
    for round in 1..=2 {
        thread::sleep(PAST_SHORT_TTL);
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let config = config.clone();
                thread::spawn(move || check(&config, &[]))
            })
            .collect();
        for (i, run) in runs.into_iter().enumerate() {
            let o = run.join().unwrap();
            assert_healthy(&o, None, &format!("round {round}, run {i}"));
        }
        let log = lab.log();
        assert!(log.errors().is_empty(), "round {round}: {:?}", log.errors());
        assert!(!token_requests(&lab, "refresh_token").is_empty());
    }
    thread::sleep(PAST_SHORT_TTL);
    let after = check(&config, &[]);
    assert_healthy(&after, None, "the grant survived");
    assert!(lab.log().errors().is_empty(), "{:?}", lab.log().errors());
}

/// A configured scope the authorization server does not grant (`admin`: the resource's
/// scopes are `read write`) is requested, dropped from the token, and does not make every
/// use re-acquire: one client_credentials request per run in both eras; after a login
/// asking for it, checks reuse the saved token.
#[test]
fn an_ungranted_configured_scope_does_not_cause_reacquisition() {
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    for (revision, era) in ERAS {
        lab.reset_log();
        let dir = TempDir::new("oauth-downscope");
        let target = Target::client_credentials(server.url(), lab.issuer(), BASIC)
            .revision(revision)
            .scopes(&["read", "admin"]);
        let o = check(&write_config(&dir, &[&target]), &lab_env(BASIC, None));
        assert_healthy(&o, Some(era), era);
        let requests = token_requests(&lab, "client_credentials");
        assert_eq!(requests.len(), 1, "{era}: {requests:?}");
        assert_eq!(
            requests[0]["scope"], "read admin",
            "{era}: configured scopes sent"
        );
        assert_eq!(
            requests[0]["scope_granted"], "read",
            "{era}: the lab down-scoped"
        );
    }

    lab.reset_log();
    let dir = TempDir::new("oauth-downscope-login");
    let token_file = dir.0.join("lab.json");
    let target =
        Target::login(server.url(), lab.issuer(), NATIVE, &token_file).scopes(&["read", "admin"]);
    let config = write_config(&dir, &[&target]);
    let login = login(&config, "lab", &[], Decision::Approve);
    login.assert_success(server.url(), "login");
    assert_eq!(
        oauth_http::query_param(&login.url, "scope").as_deref(),
        Some("read admin")
    );
    for run in 0..2 {
        assert_healthy(&check(&config, &[]), None, &format!("run {run}"));
    }
    let log = lab.log();
    assert_eq!(log.token_requests().len(), 1, "{:?}", log.token_requests());
}

/// No token and no secret in any output: `check` in every format and `doctor`, for a
/// configuration with a client-credentials target and a logged-in target, healthy and
/// then with a wrong client secret (MISCONFIGURED, and doctor names `invalid_client`).
#[test]
fn no_token_or_secret_in_any_output_format() {
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let dir = TempDir::new("oauth-leaks");
    let token_file = dir.0.join("lab.json");
    let mut cc = Target::client_credentials(server.url(), lab.issuer(), BASIC);
    cc.name = "service".to_owned();
    let mut user = Target::login(server.url(), lab.issuer(), NATIVE, &token_file);
    user.name = "user".to_owned();
    let config = write_config(&dir, &[&cc, &user]);
    let cfg = config.to_str().unwrap();
    let login = login(&config, "user", &lab_env(BASIC, None), Decision::Approve);
    login.assert_success(server.url(), "login");
    assert_no_secrets(&login.outcome(), &lab, &[], "login");

    let runs: [&[&str]; 5] = [
        &["check", cfg, "--format", "json"],
        &["check", cfg, "--format", "yaml"],
        &["check", cfg, "--format", "terminal"],
        &["doctor", cfg],
        &["doctor", cfg, "--format", "json"],
    ];
    for args in runs {
        let o = run_with(args, &lab_env(BASIC, None));
        assert_eq!(o.code, 0, "{args:?}: {}\n{}", o.stdout, o.stderr);
        assert_no_secrets(&o, &lab, &[], &format!("{args:?}"));
    }
    let wrong = "wrong-secret-canary-3e1f0c";
    for args in runs {
        let o = run_with(args, &[(SECRET_ENV, wrong.to_owned())]);
        assert_eq!(o.code, 4, "{args:?}: {}\n{}", o.stdout, o.stderr);
        let forms = leak_forms(BASIC.id, wrong);
        let forms: Vec<&str> = forms.iter().map(String::as_str).collect();
        assert_no_secrets(&o, &lab, &forms, &format!("{args:?}"));
        if args == ["doctor", cfg] {
            assert!(
                o.stdout.contains("invalid_client"),
                "doctor explains: {}",
                o.stdout
            );
        }
    }
}
