//! `login`'s authorization-code grant: the loopback callback, its wait and its cancellation.

use super::*;

/// Runs a login against `fake` that nobody completes, with `wait` and `cancel`; returns its
/// outcome, how long it took after printing the URL, and what it printed.
fn unattended_login(
    fake: &Fake,
    wait: Duration,
    cancel: &Cancel,
) -> (Result<(), String>, Duration, Vec<String>) {
    let dir = scratch("login-unattended");
    let s = public_client(fake, dir.join("user.json"));
    let started = Instant::now();
    let (worker, rx) = login_thread(s, fake.endpoint(), wait, cancel.clone());
    let result = match worker.join() {
        Ok(r) => r.map_err(|e| format!("{e:?}")),
        Err(_) => Err("the login panicked".into()),
    };
    let took = started.elapsed();
    (result, took, rx.try_iter().collect())
}

/// Nobody comes back to the callback: the login ends when its wait does, having saved
/// nothing. (The wait itself is five minutes: [`crate::oauth::authorization_code::WAIT`].)
#[test]
fn a_login_nobody_completes_ends_with_its_wait() {
    assert_eq!(
        crate::oauth::authorization_code::WAIT,
        Duration::from_secs(300)
    );
    let fake = Fake::start(good);
    let wait = Duration::from_millis(300);
    let (result, took, printed) = unattended_login(&fake, wait, &Cancel::new());
    assert!(
        result.as_ref().is_err_and(|e| e.contains("wait_expired")),
        "{result:?}"
    );
    assert!(
        took >= wait && took < wait + Duration::from_secs(1),
        "{took:?}"
    );
    assert_eq!(
        printed.first().map(String::as_str),
        Some("Open this URL to authorize AgentHealth:")
    );
}

/// A cancelled login (SIGINT at the terminal) ends at once, not after its wait, and says it
/// was cancelled: before the wait, and while it waits.
#[test]
fn a_cancelled_login_ends_without_waiting() {
    let fake = Fake::start(good);
    let cancel = Cancel::new();
    cancel.cancel();
    let (result, took, _) = unattended_login(&fake, Duration::from_secs(60), &cancel);
    assert!(
        result.as_ref().is_err_and(|e| e.contains("Cancelled")),
        "{result:?}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Cancelled once the URL is out, while the login waits for the browser.
    let dir = scratch("login-cancelled");
    let s = public_client(&fake, dir.join("user.json"));
    let cancel = Cancel::new();
    let (worker, rx) = login_thread(s, fake.endpoint(), LONG * 12, cancel.clone());
    let _ = rx.recv_timeout(LONG);
    let _url = rx.recv_timeout(LONG);
    let started = Instant::now();
    cancel.cancel();
    let result = worker.join().map_err(|_| ());
    assert!(
        matches!(
            result,
            Ok(Err(OAuthError::Step {
                step: OAuthStep::Cancelled,
                ..
            }))
        ),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(!dir.join("user.json").exists(), "nothing saved");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn login_delivers_the_code_through_the_loopback_callback() {
    let fake = Fake::start(good);
    let dir = scratch("login");
    let path = dir.join("user.json");
    let s = public_client(&fake, path.clone());
    let wait = Duration::from_secs(20);
    let (worker, rx) = login_thread(s, fake.endpoint(), wait, Cancel::new());
    assert_eq!(
        rx.recv_timeout(LONG).ok().as_deref(),
        Some("Open this URL to authorize AgentHealth:")
    );
    let url = rx.recv_timeout(LONG).unwrap_or_default();
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let params = crate::text::query_pairs(query).unwrap_or_default();
    let get = |name: &str| value(&params, name).unwrap_or_default().to_string();
    assert_eq!(get("code_challenge_method"), "S256");
    assert_eq!(get("resource"), format!("{}/mcp", fake.root));
    assert_eq!(get("response_type"), "code");
    let redirect = get("redirect_uri");
    let port: u16 = redirect
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap_or(0);
    // A request head over the callback's 8 KiB bound, and a connection closed without a
    // byte: neither is ours, and the login keeps waiting.
    let (status, _) = callback(
        port,
        &format!("/callback?pad={}", "x".repeat(9 * 1024)),
        None,
    );
    assert_eq!(status, 404);
    drop(std::net::TcpStream::connect(("127.0.0.1", port)));
    // Someone else's callback next (wrong state): refused, the login keeps waiting.
    let iss = url::form_encode(&fake.root);
    let (status, _) = callback(
        port,
        &format!("/callback?code=x&state=wrong&iss={iss}"),
        None,
    );
    assert_eq!(status, 400);
    // The wrong Host: not ours.
    let (status, _) = callback(
        port,
        &format!("/callback?code=x&state={}&iss={iss}", get("state")),
        Some("localhost"),
    );
    assert_eq!(status, 404);
    let (status, page) = callback(
        port,
        &format!("/callback?code=the-code&state={}&iss={iss}", get("state")),
        None,
    );
    assert_eq!(status, 200);
    assert!(page.contains("You can close this window"));
    let result = worker
        .join()
        .map_err(|_| ())
        .and_then(|r| r.map_err(|_| ()));
    assert!(result.is_ok());
    // The last line says when the saved access token expires (the fake's hour) and that a
    // refresh token will renew it.
    let last = rx.recv_timeout(LONG).unwrap_or_default();
    assert!(
        last.starts_with(
            "OAuth login complete; credentials saved to the configured token file. The access token expires at 20"
        ) && last.ends_with("Z; a refresh token was saved."),
        "{last}"
    );
    let form = fake.form();
    assert_eq!(value(&form, "grant_type"), Some("authorization_code"));
    assert_eq!(value(&form, "code"), Some("the-code"));
    assert_eq!(value(&form, "redirect_uri"), Some(redirect.as_str()));
    let verifier = value(&form, "code_verifier").unwrap_or_default();
    use sha2::Digest;
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(challenge, get("code_challenge"), "PKCE S256");
    assert_eq!(mode(&path), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn login_fails_on_a_wrong_issuer_without_exchanging() {
    let fake = Fake::start(good);
    let dir = scratch("login-iss");
    let mut s = settings(&fake, OAuthGrant::AuthorizationCode);
    s.configured.token_file = Some(dir.join("user.json").display().to_string());
    let wait = Duration::from_secs(20);
    let (worker, rx) = login_thread(s, fake.endpoint(), wait, Cancel::new());
    let _ = rx.recv_timeout(LONG);
    let url = rx.recv_timeout(LONG).unwrap_or_default();
    let params = crate::text::query_pairs(url.split_once('?').map(|(_, q)| q).unwrap_or_default())
        .unwrap_or_default();
    let state = value(&params, "state").unwrap_or_default().to_string();
    let port: u16 = value(&params, "redirect_uri")
        .unwrap_or_default()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap_or(0);
    let (status, _) = callback(
        port,
        &format!("/callback?code=c&state={state}&iss=https%3A%2F%2Fevil"),
        None,
    );
    assert_eq!(status, 400);
    let result = worker.join().map_err(|_| ());
    assert!(matches!(
        result,
        Ok(Err(OAuthError::Login {
            step: "iss_mismatch",
            code: None
        }))
    ));
    assert!(fake.requests("/token").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs a login with `s` against `endpoint` in a thread (the test plays the browser): its
/// outcome, and the lines it prints as they come.
fn login_thread(
    s: Settings,
    endpoint: Endpoint,
    wait: Duration,
    cancel: Cancel,
) -> (
    std::thread::JoinHandle<Result<(), OAuthError>>,
    std::sync::mpsc::Receiver<String>,
) {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let worker = std::thread::spawn(move || {
        let secrets = SecretLog::new();
        let login = crate::oauth::authorization_code::AuthorizationCode {
            settings: &s,
            endpoint: &endpoint,
            secrets: &secrets,
            step_timeout: LONG,
            wait,
            cancel: &cancel,
            register: false,
        };
        crate::oauth::authorization_code::authorize(&login, &mut LineSink(tx, Vec::new()))
    });
    (worker, rx)
}

/// A writer that sends each complete line to a channel.
struct LineSink(std::sync::mpsc::Sender<String>, Vec<u8>);

impl std::io::Write for LineSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        while let Some(i) = self.1.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.1.drain(..=i).collect();
            let _ = self
                .0
                .send(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A GET to the login's callback; returns the status and body.
fn callback(port: u16, target: &str, host: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, String::new());
    };
    let _ = stream.set_read_timeout(Some(LONG));
    let host = host.map_or_else(|| format!("127.0.0.1:{port}"), |h| format!("{h}:{port}"));
    let _ = write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}
