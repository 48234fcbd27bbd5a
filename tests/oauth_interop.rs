//! OAuth end to end through the built binary, against the OAuth lab (tests/interop/oauth.rs):
//! a real authorization server (oidc-provider) and MCP servers protected by the official
//! SDKs' own resource-server pieces, all on 127.0.0.1, plus the official conformance
//! suite's client `auth/*` scenarios run against the binary through a wrapper.
//!
//! Every grant (`client_credentials` with Basic and with post, `refresh_token` from
//! `refresh_token_env`, `authorization_code` through `agenthealth login` driven by the
//! scripted browser) in both eras against both protected servers; the quirks a real
//! authorization server has (down-scoping, rotation with reuse detection, form-encoded
//! Basic secrets, a path issuer); and never a token or a secret in any output.
//!
//! Each test starts its own authorization server and protected servers. The lab must be
//! installed (`.ci/interop-setup`, which `make test` runs first); without it these tests
//! fail saying what is missing.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::interop::oauth::{
    AsOptions, AuthServer, BASIC, BOTH_RS, Client, Conformance, NATIVE, ODD, POST, ProtectedServer,
    Rs, SECRETS, WEB, WEB_REDIRECT,
};
use crate::util::{Outcome, TempDir, bin, command, run_env};
use agenthealth_testkit::oauth_browser::{Browser, Decision};
use agenthealth_testkit::oauth_http;

/// The two eras, as the revision a target pins and the `era` evidence it yields.
const ERAS: [(&str, &str); 2] = [("2026-07-28", "modern"), ("2025-11-25", "legacy")];
/// What `agenthealth login` prints before the URL, and after success.
const LOGIN_PROMPT: &str = "Open this URL to authorize AgentHealth:";
const LOGIN_DONE: &str = "OAuth login complete; credentials saved to the configured token file.";
/// The advice every failed login ends with (upstream: `OAuth login failed; verify …`).
const LOGIN_ADVICE: &str =
    "verify issuer, client registration, callback and token file configuration";
/// Environment variables the configurations reference.
const SECRET_ENV: &str = "LAB_CLIENT_SECRET";
const REFRESH_ENV: &str = "LAB_REFRESH_TOKEN";
/// Bound on one login (the binary itself waits up to five minutes).
const LOGIN_LIMIT: Duration = Duration::from_secs(60);
/// The lab's short access-token lifetime for refresh tests, and how long to wait so a
/// token of that lifetime has surely expired.
const SHORT_TTL: u32 = 4;
const PAST_SHORT_TTL: Duration = Duration::from_millis(4_600);

/// One `mcp` target with `mcp.oauth`, written as YAML.
#[derive(Clone)]
struct Target {
    name: String,
    endpoint: String,
    issuer: String,
    client: Client,
    grant: &'static str,
    scopes: Vec<&'static str>,
    token_file: Option<PathBuf>,
    refresh_env: bool,
    redirect_port: Option<u16>,
    revision: Option<&'static str>,
}

impl Target {
    fn new(
        name: &str,
        endpoint: &str,
        issuer: &str,
        client: Client,
        grant: &'static str,
    ) -> Target {
        Target {
            name: name.to_owned(),
            endpoint: endpoint.to_owned(),
            issuer: issuer.to_owned(),
            client,
            grant,
            scopes: Vec::new(),
            token_file: None,
            refresh_env: false,
            redirect_port: None,
            revision: None,
        }
    }

    fn client_credentials(endpoint: &str, issuer: &str, client: Client) -> Target {
        Target::new("lab", endpoint, issuer, client, "client_credentials")
    }

    fn login(endpoint: &str, issuer: &str, client: Client, token_file: &Path) -> Target {
        let mut t = Target::new("lab", endpoint, issuer, client, "authorization_code");
        t.token_file = Some(token_file.to_owned());
        t
    }

    fn revision(mut self, revision: &'static str) -> Target {
        self.revision = Some(revision);
        self
    }

    fn scopes(mut self, scopes: &[&'static str]) -> Target {
        self.scopes = scopes.to_vec();
        self
    }

    fn yaml(&self) -> String {
        let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let mut y = format!(
            "  - name: {}\n    type: mcp\n    endpoint: {}\n    timeout_ms: 20000\n    mcp:\n",
            self.name,
            q(&self.endpoint)
        );
        if let Some(revision) = self.revision {
            y.push_str(&format!("      protocol_version: '{revision}'\n"));
        }
        y.push_str(&format!(
            "      oauth:\n        issuer: {}\n        client_id: {}\n        grant: {}\n",
            q(&self.issuer),
            q(self.client.id),
            self.grant
        ));
        if self.client.secret.is_some() {
            y.push_str(&format!("        client_secret_env: {SECRET_ENV}\n"));
        }
        if self.refresh_env {
            y.push_str(&format!("        refresh_token_env: {REFRESH_ENV}\n"));
        }
        if let Some(file) = &self.token_file {
            y.push_str(&format!(
                "        token_file: {}\n",
                q(&file.to_string_lossy())
            ));
        }
        if !self.scopes.is_empty() {
            y.push_str(&format!("        scopes: [{}]\n", self.scopes.join(", ")));
        }
        if let Some(port) = self.redirect_port {
            y.push_str(&format!("        redirect_port: {port}\n"));
        }
        y
    }
}

fn write_config(dir: &TempDir, targets: &[&Target]) -> PathBuf {
    let mut yaml = String::from("version: v1\ntargets:\n");
    for t in targets {
        yaml.push_str(&t.yaml());
    }
    dir.file("agenthealth.yaml", &yaml)
}

/// The environment the configurations reference: the client secret of `client`, if any,
/// and a refresh token.
fn lab_env(client: Client, refresh_token: Option<&str>) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if let Some(secret) = client.secret {
        env.push((SECRET_ENV, secret.to_owned()));
    }
    if let Some(token) = refresh_token {
        env.push((REFRESH_ENV, token.to_owned()));
    }
    env
}

fn run_with(args: &[&str], env: &[(&'static str, String)]) -> Outcome {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_env(args, &env)
}

/// `check CONFIG --format json`.
fn check(config: &Path, env: &[(&'static str, String)]) -> Outcome {
    run_with(
        &["check", config.to_str().unwrap(), "--format", "json"],
        env,
    )
}

/// A loopback redirect port nothing listens on.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Every `code` of every check of a JSON result document.
fn codes(doc: &Value) -> Vec<String> {
    doc["checks"]
        .as_object()
        .into_iter()
        .flat_map(|checks| checks.values())
        .filter_map(|c| c["code"].as_str().map(str::to_owned))
        .collect()
}

/// Exit 0, `HEALTHY`, in the era `era` (`modern`/`legacy`) when given.
fn assert_healthy(o: &Outcome, era: Option<&str>, what: &str) {
    assert_eq!(
        o.code, 0,
        "{what}: exit {}\nstdout: {}\nstderr: {}",
        o.code, o.stdout, o.stderr
    );
    let doc = o.json();
    assert_eq!(doc["status"], "HEALTHY", "{what}: {}", o.stdout);
    if let Some(era) = era {
        assert_eq!(
            doc["checks"]["protocol"]["evidence"]["era"], era,
            "{what}: {}",
            o.stdout
        );
    }
}

/// Every form a secret could leak in: itself, form-encoded, and as Basic credentials.
fn leak_forms(client_id: &str, secret: &str) -> Vec<String> {
    vec![
        secret.to_owned(),
        oauth_http::form_encode_value(secret),
        STANDARD.encode(format!("{client_id}:{secret}")),
        STANDARD.encode(format!(
            "{}:{}",
            oauth_http::form_encode_value(client_id),
            oauth_http::form_encode_value(secret)
        )),
    ]
}

/// None of the lab's client secrets, the given extra values, nor any token the
/// authorization server issued appears on stdout or stderr.
fn assert_no_secrets(o: &Outcome, lab: &AuthServer, extra: &[&str], what: &str) {
    let mut needles: Vec<String> = Vec::new();
    for client in [BASIC, POST, ODD, WEB] {
        needles.extend(leak_forms(client.id, client.secret.unwrap()));
    }
    needles.extend(SECRETS.iter().map(|s| (*s).to_owned()));
    needles.extend(extra.iter().map(|s| (*s).to_owned()));
    needles.extend(lab.log().issued_tokens());
    for needle in needles.iter().filter(|n| n.len() >= 8) {
        assert!(
            !o.stdout.contains(needle.as_str()) && !o.stderr.contains(needle.as_str()),
            "{what}: a secret or token ({}…) is in the output:\nstdout: {}\nstderr: {}",
            &needle[..6],
            o.stdout,
            o.stderr
        );
    }
}

/// The token requests the lab saw with this grant type, since its last reset.
fn token_requests(lab: &AuthServer, grant: &str) -> Vec<Value> {
    lab.log().grants(grant).into_iter().cloned().collect()
}

/// What one `agenthealth login` did.
struct Login {
    code: i32,
    stdout: String,
    stderr: String,
    /// The URL the binary printed.
    url: String,
    /// What the binary's callback listener answered.
    callback_status: u16,
    callback_body: String,
}

/// Runs `agenthealth login CONFIG TARGET` with `env`, reads the URL it prints, lets the
/// scripted browser answer `decision` on the lab's approval page, delivers the redirect to
/// the binary's callback, and waits (bounded) for the binary to exit.
fn login(config: &Path, target: &str, env: &[(&'static str, String)], decision: Decision) -> Login {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let config = config.to_string_lossy();
    let mut child = command(&["login", &config, target], &env)
        .spawn()
        .expect("spawn agenthealth login");
    let (lines_tx, lines_rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let out_reader = thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines_tx.send(line);
        }
        all
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = thread::spawn(move || {
        let mut all = String::new();
        let _ = stderr.read_to_string(&mut all);
        all
    });

    let deadline = Instant::now() + LOGIN_LIMIT;
    let mut url = String::new();
    let mut prompt_seen = false;
    while Instant::now() < deadline {
        match lines_rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if prompt_seen => {
                url = line.trim().to_owned();
                break;
            }
            Ok(line) => prompt_seen = line.trim() == LOGIN_PROMPT,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }

    let mut callback_status = 0;
    let mut callback_body = String::new();
    if !url.is_empty() {
        let redirect = oauth_http::query_param(&url, "redirect_uri").unwrap_or_default();
        let mut browser = Browser::new();
        let callback = browser.authorize(&url, decision, |u| {
            !redirect.is_empty() && u.starts_with(redirect.as_str())
        });
        match callback {
            Ok(callback) => {
                let answer = browser.deliver(&callback).expect("deliver the callback");
                callback_status = answer.status;
                callback_body = answer.text();
            }
            Err(err) => {
                kill(&mut child);
                panic!("login URL {url}: {err}");
            }
        }
    }
    let code = wait_bounded(&mut child, deadline);
    Login {
        code,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        url,
        callback_status,
        callback_body,
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The exit code, or -1 after killing a child still running at `deadline`.
fn wait_bounded(child: &mut Child, deadline: Instant) -> i32 {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code().unwrap_or(-1),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            _ => {
                kill(child);
                return -1;
            }
        }
    }
}

impl Login {
    fn outcome(&self) -> Outcome {
        Outcome {
            code: self.code,
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            elapsed: Duration::ZERO,
        }
    }

    /// Exit 0, the success line, the printed URL as the spec says, the callback answered.
    fn assert_success(&self, resource: &str, what: &str) {
        assert_eq!(
            self.code, 0,
            "{what}: login exit {}\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        assert!(
            self.stdout.lines().any(|l| l.trim() == LOGIN_DONE),
            "{what}: {}",
            self.stdout
        );
        let param = |name| oauth_http::query_param(&self.url, name);
        assert_eq!(
            param("code_challenge_method").as_deref(),
            Some("S256"),
            "{what}"
        );
        assert_eq!(param("response_type").as_deref(), Some("code"), "{what}");
        assert_eq!(param("resource").as_deref(), Some(resource), "{what}");
        assert!(
            param("code_challenge").is_some_and(|c| c.len() >= 43),
            "{what}"
        );
        assert!(
            param("state").is_some_and(|s| s.len() >= 22),
            "{what}: state"
        );
        let redirect = param("redirect_uri").unwrap_or_default();
        assert!(
            redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
            "{what}: {redirect}"
        );
        assert_eq!(self.callback_status, 200, "{what}: {}", self.callback_body);
        assert!(
            !self.callback_body.trim().is_empty(),
            "{what}: empty callback page"
        );
    }
}

/// Mode bits of a path.
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn refresh_token_of(login: &Value) -> String {
    login["refresh_token"]
        .as_str()
        .expect("the lab issues refresh tokens at login")
        .to_owned()
}

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

/// The official conformance suite's client `auth/*` scenarios that fit a pre-registered
/// client (tests/interop/README.md says which do not, and why). Each must pass by the
/// suite's own verdict: no FAILURE or WARNING check, and the wrapper's exit accepted.
const CONFORMANCE_SCENARIOS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/pre-registration",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/resource-mismatch",
    "auth/offline-access-not-supported",
];

/// A scenario whose protected server answers `HEAD /mcp` with 404: the `WWW-Authenticate`
/// challenge naming the scope to request comes only with the 401 to a POST, so a client
/// that reads the challenge from `HEAD` alone requests no scope (a WARNING, which fails).
const CONFORMANCE_POST_CHALLENGE_SCENARIOS: &[&str] = &["auth/scope-from-www-authenticate"];

/// Runs one scenario; `Err` with the suite's report when it does not pass.
fn run_conformance(suite: &Conformance, scenario: &str) -> Result<(), String> {
    let dir = TempDir::new("conformance");
    let results = dir.0.join("results");
    let command = format!(
        "{} {}",
        suite.wrapper_node.display(),
        suite.wrapper.display()
    );
    assert_eq!(
        command.split(' ').count(),
        2,
        "the suite splits --command on spaces: {command}"
    );
    let out = Command::new(&suite.node)
        .arg(&suite.cli)
        .args([
            "client",
            "--command",
            &command,
            "--scenario",
            scenario,
            "-o",
        ])
        .arg(&results)
        .env("AGENTHEALTH_BIN", bin())
        .env("AGENTHEALTH_CONFORMANCE_DIR", dir.0.join("work"))
        .stdin(Stdio::null())
        .output()
        .expect("run the conformance suite");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let checks = find_checks(&results).map(|p| std::fs::read_to_string(p).unwrap_or_default());
    let failing: Vec<String> = checks
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .map(|c| format!("{} {}: {}", c["status"], c["id"], c["description"]))
        .collect();
    if out.status.success() && failing.is_empty() && checks.is_some() {
        Ok(())
    } else {
        Err(format!(
            "{scenario}: suite exit {:?}; failing checks: {failing:#?}\n{report}",
            out.status.code()
        ))
    }
}

/// The `checks.json` the suite wrote under `dir` (one scenario per run).
fn find_checks(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                return Some(path);
            }
        }
    }
    None
}

/// Runs `scenarios`, [`CONFORMANCE_PARALLEL`] at a time (each spends most of its time
/// starting Node), and fails with every report that did not pass.
fn assert_conformance(scenarios: &[&'static str]) {
    let suite = Conformance::locate();
    let suite = std::sync::Arc::new(suite);
    let mut failures = Vec::new();
    for chunk in scenarios.chunks(CONFORMANCE_PARALLEL) {
        let runs: Vec<_> = chunk
            .iter()
            .map(|&scenario| {
                let suite = std::sync::Arc::clone(&suite);
                thread::spawn(move || run_conformance(&suite, scenario))
            })
            .collect();
        failures.extend(runs.into_iter().filter_map(|r| r.join().unwrap().err()));
    }
    assert!(
        failures.is_empty(),
        "{} of {} conformance scenarios failed:\n\n{}",
        failures.len(),
        scenarios.len(),
        failures.join("\n\n")
    );
}

/// Scenarios run at once (each starts its own servers on ephemeral ports).
const CONFORMANCE_PARALLEL: usize = 3;

#[test]
fn conformance_auth_scenarios_for_a_pre_registered_client_pass() {
    assert_conformance(CONFORMANCE_SCENARIOS);
}

#[test]
fn conformance_scope_from_a_challenge_sent_only_on_post_passes() {
    assert_conformance(CONFORMANCE_POST_CHALLENGE_SCENARIOS);
}
