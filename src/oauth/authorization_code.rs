//! The authorization code grant with PKCE, through a loopback callback: what `agenthealth
//! login` runs (`src/login.rs` is the command around it).
//!
//! 1. Discovery as for a check; the authorization endpoint must be secure, the server
//!    must list PKCE `S256`, and the client must be one its token endpoint can authenticate.
//! 2. A verifier and a `state` of 32 random bytes each (base64url), the S256 challenge, and a
//!    listener on `127.0.0.1:<redirect_port>` (ephemeral when unset); the authorization URL
//!    ([`super::authorization_request`]: `client_id`, `response_type`, `redirect_uri`,
//!    `code_challenge`, `code_challenge_method`, `state`, `resource` and `scope`, pushed
//!    first when the server requires it) is printed after `Open this URL to authorize
//!    AgentHealth:`.
//! 3. The callback listener ([`loopback`]: one thread, up to 16 connections at once, each
//!    request head within 2 s of its accept and 8 KiB, each answer within 1 s) answers only
//!    `GET /callback` whose `Host` is exactly `127.0.0.1:<port>` (anything else: 404), so
//!    idle or trickling connections never delay the real callback. A missing, repeated or wrong `state`
//!    is answered 400 and the login keeps waiting — it was not our authorization. With our
//!    `state`: an `iss` that is repeated, wrong, or missing although the server advertises
//!    RFC 9207 fails the login; so does an `error` or a missing `code`. Only the first
//!    outcome counts, and the browser always gets a page it can show.
//! 4. Under the token file's lock, the space for the token is reserved
//!    ([`store::reserve`]); then the code is exchanged (with the verifier and the same
//!    `redirect_uri`) and the token saved. No token is ever printed.
//!
//! The wait is bounded (five minutes by default) and ends at once when the caller cancels
//! (`oauth=cancelled`: nothing was saved).

use std::io::Write;
use std::net::TcpListener;
use std::time::Duration;

use base64::Engine as _;

use super::OAuthError;
use super::acquire::Settings;
use super::authorization_request;
use super::discovery::{self, Discovered};
use super::loopback::{self, Page, Verdict, WaitEnd};
use super::random::random;
use super::store;
use super::token;
use super::url::parse_query;
use crate::contract::Bound;
use crate::net::{Client, Endpoint, Reuse};
use crate::result::reason::{OAuthStep, TokenFileProblem};
use crate::runtime::{Attempt, Cancel, Deadline, SecretLog};

/// How long login waits for the browser.
pub(crate) const WAIT: Duration = Duration::from_secs(300);
/// What the login needs beyond its settings.
pub(crate) struct AuthorizationCode<'a> {
    /// The target's settings.
    pub settings: &'a Settings,
    /// The MCP endpoint.
    pub endpoint: &'a Endpoint,
    /// Where learned tokens are recorded.
    pub secrets: &'a SecretLog,
    /// The deadline of each network step (discovery, the exchange).
    pub step_timeout: Duration,
    /// How long to wait for the browser.
    pub wait: Duration,
    /// The user's cancellation (a signal), which ends the wait at once.
    pub cancel: &'a Cancel,
}

/// Runs the login; `out` receives the two lines that show the URL, then the success line.
pub(crate) fn authorize(
    login: &AuthorizationCode<'_>,
    out: &mut dyn Write,
) -> Result<(), OAuthError> {
    let settings = login.settings;
    let token_file = settings
        .token_file()
        .ok_or_else(|| OAuthError::file(TokenFileProblem::Unwritable))?;
    let mut client = Client::new(Reuse::KeepAlive);
    let step = || Attempt::new(Deadline::after(login.step_timeout, Bound::TimeoutMs));
    let discovered = discover(&mut client, login, &step())?;

    let verifier = random_text()?;
    let state = random_text()?;
    let challenge = pkce_challenge(&verifier);
    let listener = TcpListener::bind(("127.0.0.1", settings.configured.redirect_port.unwrap_or(0)))
        .map_err(|_| OAuthError::step(OAuthStep::Callback))?;
    let port = listener
        .local_addr()
        .map_err(|_| OAuthError::step(OAuthStep::Callback))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let leg = authorization_request::Leg {
        redirect_uri: &redirect_uri,
        code_challenge: &challenge,
        state: &state,
        configured_scopes: &settings.configured.scopes,
    };
    let url = authorization_request::browser_url(
        &mut client,
        &discovered,
        &settings.client_auth(),
        &leg,
        login.secrets,
        &step(),
    )?;
    say(
        out,
        &format!("Open this URL to authorize AgentHealth:\n{url}"),
    )?;

    let expect = Expected {
        host: format!("127.0.0.1:{port}"),
        state: &state,
        issuer: &settings.configured.issuer,
        iss_required: discovered.server.iss_required,
    };
    let code = wait_for_code(&listener, &expect, login)?;
    drop(listener);

    let grant = Grant {
        code: &code,
        verifier: &verifier,
        redirect_uri: &redirect_uri,
    };
    exchange(&mut client, &discovered, login, &grant, token_file)?;
    say(
        out,
        "OAuth login complete; credentials saved to the configured token file.",
    )
}

/// Discovery as for a check, then what login needs besides: a secure authorization
/// endpoint, PKCE S256, and a client the token endpoint would authenticate (refused before
/// the browser is involved).
fn discover(
    client: &mut Client,
    login: &AuthorizationCode<'_>,
    attempt: &Attempt,
) -> Result<Discovered, OAuthError> {
    let settings = login.settings;
    let discovered = discovery::discover(
        client,
        login.endpoint,
        &settings.configured.issuer,
        &settings.configured.scopes,
        attempt,
    )?;
    if discovered.server.authorization_endpoint.is_none() {
        return Err(OAuthError::step(OAuthStep::InsecureEndpoint));
    }
    if !discovered.server.pkce_s256 {
        return Err(OAuthError::step(OAuthStep::Pkce));
    }
    token::choose(
        &settings.client_auth(),
        discovered.server.auth_methods.as_deref(),
    )?;
    Ok(discovered)
}

/// Writes a line for the person logging in (a writer that fails is a failed callback step:
/// nobody would see the URL).
fn say(out: &mut dyn Write, line: &str) -> Result<(), OAuthError> {
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|_| OAuthError::step(OAuthStep::Callback))
}

/// What a callback must carry.
struct Expected<'a> {
    host: String,
    state: &'a str,
    issuer: &'a str,
    iss_required: bool,
}

/// What one callback request meant.
#[derive(Debug, PartialEq, Eq)]
enum Callback {
    /// Not the callback (wrong method, path or Host): 404, keep waiting.
    NotOurs,
    /// Not our authorization (`state`): 400, keep waiting.
    WrongState,
    /// Our authorization, failed: 400, the login fails.
    Failed,
    /// Our authorization, with this code.
    Code(String),
}

/// Serves the callback ([`loopback::serve`]) until a code, a failure, the wait's end or
/// cancellation.
fn wait_for_code(
    listener: &TcpListener,
    expect: &Expected<'_>,
    login: &AuthorizationCode<'_>,
) -> Result<String, OAuthError> {
    let judged = loopback::serve(listener, login.wait, login.cancel, &|head| {
        verdict(head, expect)
    });
    match judged {
        Ok(code) => code,
        Err(WaitEnd::Cancelled) => Err(OAuthError::step(OAuthStep::Cancelled)),
        Err(WaitEnd::Expired | WaitEnd::Failed) => Err(OAuthError::step(OAuthStep::Callback)),
    }
}

/// The page a request head gets, and whether it ends the login: only our callback does,
/// with its code or its failure; anything else is answered and the login keeps waiting.
fn verdict(head: Option<&str>, expect: &Expected<'_>) -> Verdict<Result<String, OAuthError>> {
    let page = |status, text| Page { status, text };
    match head.map_or(Callback::NotOurs, |h| judge(h, expect)) {
        Callback::NotOurs => Verdict::Wait(page("404 Not Found", "Not found.")),
        Callback::WrongState => Verdict::Wait(page("400 Bad Request", "Invalid OAuth callback.")),
        Callback::Failed => Verdict::Done(
            page("400 Bad Request", "OAuth authorization failed."),
            Err(OAuthError::step(OAuthStep::Callback)),
        ),
        Callback::Code(code) => Verdict::Done(
            page(
                "200 OK",
                "Authorization received. You can close this window.",
            ),
            Ok(code),
        ),
    }
}

/// What a request head means for this login.
fn judge(head: &str, expect: &Expected<'_>) -> Callback {
    let mut lines = head.split("\r\n");
    let mut request = lines.next().unwrap_or_default().split(' ');
    let (method, target) = (request.next(), request.next());
    let hosts: Vec<&str> = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim())
        .collect();
    let Some(target) = target.filter(|_| method == Some("GET")) else {
        return Callback::NotOurs;
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != "/callback" || hosts != [expect.host.as_str()] {
        return Callback::NotOurs;
    }
    let params = parse_query(query);
    let all = |name: &str| -> Vec<&str> {
        params
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    if all("state") != [expect.state] {
        return Callback::WrongState;
    }
    let iss = all("iss");
    let iss_ok = match iss.as_slice() {
        [] => !expect.iss_required,
        [one] => *one == expect.issuer,
        _ => false,
    };
    if !iss_ok || !all("error").is_empty() {
        return Callback::Failed;
    }
    match all("code").as_slice() {
        [code] if !code.is_empty() => Callback::Code((*code).to_string()),
        _ => Callback::Failed,
    }
}

/// What the browser's round trip gave, to exchange for a token.
struct Grant<'a> {
    code: &'a str,
    verifier: &'a str,
    redirect_uri: &'a str,
}

/// The code for a token, saved to `token_file`: under the file's lock the space for the token
/// is reserved before the code is spent, so a volume that cannot take it fails the login
/// before the grant exists.
fn exchange(
    client: &mut Client,
    discovered: &Discovered,
    login: &AuthorizationCode<'_>,
    grant: &Grant<'_>,
    token_file: &std::path::Path,
) -> Result<(), OAuthError> {
    let settings = login.settings;
    let attempt = Attempt::new(Deadline::after(login.step_timeout, Bound::TimeoutMs));
    let _lock = store::lock(token_file, attempt.deadline())?;
    let reservation = store::reserve(&store::Os, token_file)?;
    let token = token::request(
        client,
        discovered,
        &settings.client_auth(),
        &[
            ("grant_type", "authorization_code"),
            ("code", grant.code),
            ("code_verifier", grant.verifier),
            ("redirect_uri", grant.redirect_uri),
        ],
        login.secrets,
        &attempt,
    )?;
    reservation.commit(&token, &settings.binding(login.endpoint))
}

/// 32 random bytes, base64url without padding.
fn random_text() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 32];
    random(&mut bytes)?;
    Ok(base64url(&bytes))
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The RFC 7636 S256 challenge: SHA-256 from ring, the crate that already supplies our TLS and
/// randomness, so one implementation serves every digest.
fn pkce_challenge(verifier: &str) -> String {
    base64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(iss_required: bool) -> Expected<'static> {
        Expected {
            host: "127.0.0.1:8765".into(),
            state: "s1",
            issuer: "https://as.example",
            iss_required,
        }
    }

    fn head(target: &str, host: &str) -> String {
        format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: x\r\n\r\n")
    }

    #[test]
    fn only_our_callback_with_our_state_and_issuer_gives_a_code() {
        let e = expect(true);
        let h = "127.0.0.1:8765";
        let ok = "/callback?code=c%2F1&state=s1&iss=https%3A%2F%2Fas.example";
        assert_eq!(judge(&head(ok, h), &e), Callback::Code("c/1".into()));
        for (target, host, want) in [
            (ok, "localhost:8765", Callback::NotOurs),
            (ok, "127.0.0.1:8766", Callback::NotOurs),
            ("/other?code=c&state=s1", h, Callback::NotOurs),
            (
                "/callback?code=c&state=s2&iss=https%3A%2F%2Fas.example",
                h,
                Callback::WrongState,
            ),
            (
                "/callback?code=c&iss=https%3A%2F%2Fas.example",
                h,
                Callback::WrongState,
            ),
            (
                "/callback?code=c&state=s1&state=s1&iss=https%3A%2F%2Fas.example",
                h,
                Callback::WrongState,
            ),
            ("/callback?code=c&state=s1", h, Callback::Failed),
            (
                "/callback?code=c&state=s1&iss=https%3A%2F%2Fevil",
                h,
                Callback::Failed,
            ),
            (
                "/callback?code=c&state=s1&iss=https%3A%2F%2Fas.example&iss=https%3A%2F%2Fas.example",
                h,
                Callback::Failed,
            ),
            (
                "/callback?error=access_denied&state=s1&iss=https%3A%2F%2Fas.example",
                h,
                Callback::Failed,
            ),
            (
                "/callback?state=s1&iss=https%3A%2F%2Fas.example",
                h,
                Callback::Failed,
            ),
            (
                "/callback?code=&state=s1&iss=https%3A%2F%2Fas.example",
                h,
                Callback::Failed,
            ),
        ] {
            assert_eq!(judge(&head(target, host), &e), want, "{target} {host}");
        }
        let post = format!("POST {ok} HTTP/1.1\r\nHost: {h}\r\n\r\n");
        assert_eq!(judge(&post, &e), Callback::NotOurs);
        let two_hosts = format!("GET {ok} HTTP/1.1\r\nHost: {h}\r\nHost: {h}\r\n\r\n");
        assert_eq!(judge(&two_hosts, &e), Callback::NotOurs);
        // Without RFC 9207 advertised, a missing iss is fine, a wrong one never.
        let lax = expect(false);
        assert_eq!(
            judge(&head("/callback?code=c&state=s1", h), &lax),
            Callback::Code("c".into())
        );
        assert_eq!(
            judge(&head("/callback?code=c&state=s1&iss=x", h), &lax),
            Callback::Failed
        );
    }

    #[test]
    fn pkce_is_s256_of_the_verifier() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            pkce_challenge(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let a = random_text().expect("random");
        let b = random_text().expect("random");
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
    }
}
