//! The OAuth end-to-end tests' harness: `mcp` targets with `mcp.oauth` written as YAML,
//! runs with the lab's secrets in the environment, the assertions that no secret leaks, and
//! `agenthealth login` driven by the scripted browser.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::interop::oauth::{
    BASIC, Client, Lab, ODD, POST, SDK_BASIC, SDK_POST, SDK_SECRETS, SECRETS, WEB,
};
use crate::util::{Outcome, TempDir, command, run_env};
use agenthealth_testkit::oauth_browser::{Browser, Decision};
use agenthealth_testkit::oauth_http;

/// The two eras, as the revision a target pins and the `era` evidence it yields.
pub(super) const ERAS: [(&str, &str); 2] = [("2026-07-28", "modern"), ("2025-11-25", "legacy")];
/// What `agenthealth login` prints before the URL, and after success.
const LOGIN_PROMPT: &str = "Open this URL to authorize AgentHealth:";
pub(super) const LOGIN_DONE: &str = "OAuth login complete; credentials saved to the configured token file. The access token expires at ";
/// The advice every failed login ends with (upstream: `OAuth login failed; verify …`).
pub(super) const LOGIN_ADVICE: &str =
    "verify issuer, client registration, callback and token file configuration";
/// Environment variables the configurations reference.
pub(super) const SECRET_ENV: &str = "LAB_CLIENT_SECRET";
const REFRESH_ENV: &str = "LAB_REFRESH_TOKEN";
/// Bound on one login (the binary itself waits up to five minutes).
const LOGIN_LIMIT: Duration = Duration::from_secs(60);
/// The lab's short access-token lifetime for refresh tests, and how long to wait so a
/// token of that lifetime has surely expired.
pub(super) const SHORT_TTL: u32 = 4;
pub(super) const PAST_SHORT_TTL: Duration = Duration::from_millis(4_600);

/// One `mcp` target with `mcp.oauth`, written as YAML.
#[derive(Clone)]
pub(super) struct Target {
    pub(super) name: String,
    pub(super) endpoint: String,
    pub(super) issuer: String,
    pub(super) client: Client,
    pub(super) grant: &'static str,
    pub(super) scopes: Vec<&'static str>,
    pub(super) token_file: Option<PathBuf>,
    pub(super) refresh_env: bool,
    pub(super) redirect_port: Option<u16>,
    pub(super) revision: Option<&'static str>,
    /// `token_endpoint_auth_method`, when configured.
    pub(super) auth_method: Option<&'static str>,
    /// No `client_id`: `login --register` registers one and saves it in the token file.
    pub(super) register: bool,
}

impl Target {
    pub(super) fn new(
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
            auth_method: None,
            register: false,
        }
    }

    pub(super) fn client_credentials(endpoint: &str, issuer: &str, client: Client) -> Target {
        Target::new("lab", endpoint, issuer, client, "client_credentials")
    }

    pub(super) fn login(endpoint: &str, issuer: &str, client: Client, token_file: &Path) -> Target {
        let mut t = Target::new("lab", endpoint, issuer, client, "authorization_code");
        t.token_file = Some(token_file.to_owned());
        t
    }

    pub(super) fn revision(mut self, revision: &'static str) -> Target {
        self.revision = Some(revision);
        self
    }

    pub(super) fn auth_method(mut self, method: &'static str) -> Target {
        self.auth_method = Some(method);
        self
    }

    pub(super) fn scopes(mut self, scopes: &[&'static str]) -> Target {
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
            "      oauth:\n        issuer: {}\n",
            q(&self.issuer)
        ));
        if !self.register {
            y.push_str(&format!("        client_id: {}\n", q(self.client.id)));
        }
        y.push_str(&format!("        grant: {}\n", self.grant));
        if self.client.secret.is_some() && !self.register {
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
        if let Some(method) = self.auth_method {
            y.push_str(&format!("        token_endpoint_auth_method: {method}\n"));
        }
        y
    }
}

pub(super) fn write_config(dir: &TempDir, targets: &[&Target]) -> PathBuf {
    let mut yaml = String::from("version: v1\ntargets:\n");
    for t in targets {
        yaml.push_str(&t.yaml());
    }
    dir.file("agenthealth.yaml", &yaml)
}

/// The environment the configurations reference: the client secret of `client`, if any,
/// and a refresh token.
pub(super) fn lab_env(client: Client, refresh_token: Option<&str>) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if let Some(secret) = client.secret {
        env.push((SECRET_ENV, secret.to_owned()));
    }
    if let Some(token) = refresh_token {
        env.push((REFRESH_ENV, token.to_owned()));
    }
    env
}

pub(super) fn run_with(args: &[&str], env: &[(&'static str, String)]) -> Outcome {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_env(args, &env)
}

/// `check CONFIG --format json`.
pub(super) fn check(config: &Path, env: &[(&'static str, String)]) -> Outcome {
    run_with(
        &["check", config.to_str().unwrap(), "--format", "json"],
        env,
    )
}

/// `doctor CONFIG` (the terminal advice).
pub(super) fn doctor(config: &Path, env: &[(&'static str, String)]) -> Outcome {
    run_with(&["doctor", config.to_str().unwrap()], env)
}

/// The JSON object saved in `token_file`.
pub(super) fn saved_file(token_file: &Path) -> Value {
    let text = std::fs::read_to_string(token_file).expect("token file");
    serde_json::from_str(&text).expect("token file JSON")
}

/// Makes the access token saved in `token_file` look expired (its `expires_at` an hour
/// ago), so the next check refreshes without waiting for the lifetime to pass.
pub(super) fn expire_saved_token(token_file: &Path) {
    let text = std::fs::read_to_string(token_file).expect("token file");
    let mut doc: Value = serde_json::from_str(&text).expect("token file JSON");
    doc["expires_at"] = Value::from("2000-01-01T00:00:00Z");
    std::fs::write(token_file, format!("{doc}\n")).expect("rewrite the token file");
}

/// The evidence of the check named `check` of a JSON result document.
pub(super) fn evidence<'a>(doc: &'a Value, check: &str) -> &'a Value {
    &doc["checks"][check]["evidence"]
}

/// A loopback redirect port nothing listens on.
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Every `code` of every check of a JSON result document.
pub(super) fn codes(doc: &Value) -> Vec<String> {
    doc["checks"]
        .as_object()
        .into_iter()
        .flat_map(|checks| checks.values())
        .filter_map(|c| c["code"].as_str().map(str::to_owned))
        .collect()
}

/// Exit 0, `HEALTHY`, in the era `era` (`modern`/`legacy`) when given.
pub(super) fn assert_healthy(o: &Outcome, era: Option<&str>, what: &str) {
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
pub(super) fn leak_forms(client_id: &str, secret: &str) -> Vec<String> {
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

/// None of the labs' client secrets, the given extra values, nor any token or client secret
/// the authorization server issued appears on stdout or stderr.
pub(super) fn assert_no_secrets(o: &Outcome, lab: &impl Lab, extra: &[&str], what: &str) {
    let mut needles: Vec<String> = Vec::new();
    for client in [BASIC, POST, ODD, WEB, SDK_BASIC, SDK_POST] {
        needles.extend(leak_forms(client.id, client.secret.unwrap()));
    }
    needles.extend(SECRETS.iter().chain(&SDK_SECRETS).map(|s| (*s).to_owned()));
    needles.extend(extra.iter().map(|s| (*s).to_owned()));
    let log = lab.log();
    needles.extend(log.issued_tokens());
    needles.extend(log.registered_secrets());
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
pub(super) fn token_requests(lab: &impl Lab, grant: &str) -> Vec<Value> {
    lab.log().grants(grant).into_iter().cloned().collect()
}

/// What one `agenthealth login` did.
pub(super) struct Login {
    pub(super) code: i32,
    pub(super) stdout: String,
    pub(super) stderr: String,
    /// The URL the binary printed.
    pub(super) url: String,
    /// What the binary's callback listener answered.
    pub(super) callback_status: u16,
    pub(super) callback_body: String,
}

/// Runs `agenthealth login CONFIG TARGET` with `env`, reads the URL it prints, lets the
/// scripted browser answer `decision` on the lab's approval page, delivers the redirect to
/// the binary's callback, and waits (bounded) for the binary to exit.
pub(super) fn login(
    config: &Path,
    target: &str,
    env: &[(&'static str, String)],
    decision: Decision,
) -> Login {
    login_args(config, target, &[], env, decision)
}

/// [`login`] with `--register`.
pub(super) fn login_registering(
    config: &Path,
    target: &str,
    env: &[(&'static str, String)],
    decision: Decision,
) -> Login {
    login_args(config, target, &["--register"], env, decision)
}

fn login_args(
    config: &Path,
    target: &str,
    extra: &[&str],
    env: &[(&'static str, String)],
    decision: Decision,
) -> Login {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let config = config.to_string_lossy();
    let mut args = vec!["login", &config, target];
    args.extend_from_slice(extra);
    let mut child = command(&args, &env)
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
        // A pushed request's URL names no redirect_uri: the callback is the loopback
        // `/callback` then.
        let callback = browser.authorize(&url, decision, |u| {
            if redirect.is_empty() {
                oauth_http::split_url(u).1.starts_with("/callback")
            } else {
                u.starts_with(redirect.as_str())
            }
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
    pub(super) fn outcome(&self) -> Outcome {
        Outcome {
            code: self.code,
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            elapsed: Duration::ZERO,
        }
    }

    /// Exit 0, the success line, the printed URL as the spec says, the callback answered.
    pub(super) fn assert_success(&self, resource: &str, what: &str) {
        assert_eq!(
            self.code, 0,
            "{what}: login exit {}\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        assert!(
            self.stdout
                .lines()
                .any(|l| l.trim().starts_with(LOGIN_DONE)),
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
pub(super) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

pub(super) fn refresh_token_of(login: &Value) -> String {
    login["refresh_token"]
        .as_str()
        .expect("the lab issues refresh tokens at login")
        .to_owned()
}
