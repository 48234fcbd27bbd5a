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
use super::registration::{self, Registered};
use super::store;
use super::token;
use crate::contract::Bound;
use crate::net::{Client, Endpoint, Reuse};
use crate::result::reason::{NO_REFRESH_TOKEN, OAuthStep, TokenFileProblem};
use crate::runtime::{Attempt, Cancel, Deadline, SecretLog};
use crate::text::rfc3339::{self, Timestamp};

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
    /// `--register`: register a client first (RFC 7591).
    pub register: bool,
}

/// Runs the login; `out` receives the registered client's id (with `--register`), the two
/// lines that show the URL, then the line that says what was saved.
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
    // No client configured: the one `--register` saved, read before any request is sent.
    let saved = match (&settings.configured.client_id, login.register) {
        (None, false) => Some(saved_client(login, token_file, &step())?),
        _ => None,
    };
    let discovered = discover(&mut client, login, &step())?;
    let (listener, redirect_uri) = callback(settings.configured.redirect_port, saved.as_ref())?;
    let registered = match saved {
        Some(saved) => Some(saved),
        None if login.register => {
            let r = register(&mut client, &discovered, login, &redirect_uri, &step())?;
            say(
                out,
                &format!(
                    "Registered client {} at {}.",
                    r.client_id, settings.configured.issuer
                ),
            )?;
            Some(r)
        }
        None => None,
    };
    let auth = settings
        .client_auth(registered.as_ref())
        .ok_or(OAuthError::LoginRequired)?;
    // A client the token endpoint would refuse is refused before the browser is involved.
    token::choose(&auth, discovered.server.auth_methods.as_deref())?;

    let verifier = random_text()?;
    let state = random_text()?;
    let challenge = pkce_challenge(&verifier);
    let leg = authorization_request::Leg {
        redirect_uri: &redirect_uri,
        code_challenge: &challenge,
        state: &state,
        configured_scopes: &settings.configured.scopes,
    };
    let url = authorization_request::browser_url(
        &mut client,
        &discovered,
        &auth,
        &leg,
        login.secrets,
        &step(),
    )?;
    say(
        out,
        &format!("Open this URL to authorize AgentHealth:\n{url}"),
    )?;
    let expect = Expected {
        host: redirect_uri
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_string(),
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
        registered,
    };
    let token = exchange(&mut client, &discovered, login, grant, token_file)?;
    say(out, &saved_line(&token))
}

/// Login's last line: what was saved, when the access token expires, and whether a refresh
/// token will renew it.
fn saved_line(token: &token::Token) -> String {
    let at = Timestamp::from_system(token.expires_at);
    let at = rfc3339::format(Timestamp { nanos: 0, ..at }).replace(".000000000Z", "Z");
    let refresh = if token.refresh.is_some() {
        "a refresh token was saved"
    } else {
        NO_REFRESH_TOKEN
    };
    format!(
        "OAuth login complete; credentials saved to the configured token file. The access token expires at {at}; {refresh}."
    )
}

/// The client an earlier `login --register` saved in the token file (none configured).
fn saved_client(
    login: &AuthorizationCode<'_>,
    token_file: &std::path::Path,
    attempt: &Attempt,
) -> Result<Registered, OAuthError> {
    let _lock = store::lock(token_file, attempt.deadline())?;
    let binding = login.settings.binding(login.endpoint);
    store::read(token_file, &binding, login.secrets)?
        .and_then(|t| t.registered)
        .ok_or(OAuthError::LoginRequired)
}

/// The loopback callback's listener and redirect URI: on `redirect_port`, else on the port a
/// saved registration's redirect URI names (servers match a registered redirect exactly),
/// else on an ephemeral port.
fn callback(
    redirect_port: Option<u16>,
    saved: Option<&Registered>,
) -> Result<(TcpListener, String), OAuthError> {
    let registered_port = saved.and_then(|r| {
        r.redirect_uri
            .strip_prefix("http://127.0.0.1:")?
            .strip_suffix("/callback")?
            .parse::<u16>()
            .ok()
    });
    let port = redirect_port.or(registered_port).unwrap_or(0);
    let failed = || OAuthError::step(OAuthStep::Callback);
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|_| failed())?;
    let port = listener.local_addr().map_err(|_| failed())?.port();
    Ok((listener, format!("http://127.0.0.1:{port}/callback")))
}

/// Registers a client for `redirect_uri` (RFC 7591) with the method the configuration names
/// or the server's list allows, asking for the scope the login will ask for.
fn register(
    client: &mut Client,
    discovered: &Discovered,
    login: &AuthorizationCode<'_>,
    redirect_uri: &str,
    attempt: &Attempt,
) -> Result<Registered, OAuthError> {
    let configured = &login.settings.configured;
    let method = registration::method_to_register(
        configured.token_endpoint_auth_method,
        discovered.server.auth_methods.as_deref(),
    );
    let (scope, _) = authorization_request::login_scope(discovered, &configured.scopes);
    registration::register(
        client,
        &discovered.server,
        redirect_uri,
        scope.as_deref(),
        method,
        login.secrets,
        attempt,
    )
}

/// Discovery as for a check, then what login needs besides: a secure authorization
/// endpoint and PKCE S256.
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
    Failed(Failure),
    /// Our authorization, with this code.
    Code(String),
}

/// Why our authorization failed, in fixed words: the step (`callback_error`, `iss_missing`,
/// `iss_mismatch`, `no_code`) and the authorization server's `error` code when it is one of
/// [`AUTHORIZATION_ERRORS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Failure {
    step: &'static str,
    code: Option<&'static str>,
}

/// The RFC 6749 §4.1.2.1 (and RFC 8707) `error` codes an authorization response may carry,
/// each with the sentence the browser shows; any other code is reported without its text.
const AUTHORIZATION_ERRORS: [(&str, &str); 8] = [
    (
        "access_denied",
        "OAuth authorization failed: the authorization server answered access_denied (the request was denied).",
    ),
    (
        "invalid_request",
        "OAuth authorization failed: the authorization server answered invalid_request.",
    ),
    (
        "unauthorized_client",
        "OAuth authorization failed: the authorization server answered unauthorized_client.",
    ),
    (
        "unsupported_response_type",
        "OAuth authorization failed: the authorization server answered unsupported_response_type.",
    ),
    (
        "invalid_scope",
        "OAuth authorization failed: the authorization server answered invalid_scope.",
    ),
    (
        "server_error",
        "OAuth authorization failed: the authorization server answered server_error.",
    ),
    (
        "temporarily_unavailable",
        "OAuth authorization failed: the authorization server answered temporarily_unavailable.",
    ),
    (
        "invalid_target",
        "OAuth authorization failed: the authorization server answered invalid_target.",
    ),
];

impl Failure {
    /// The sentence the browser shows: the step, and the code when known.
    fn page(self) -> &'static str {
        match self.step {
            "iss_missing" => {
                "OAuth authorization failed: the response has no iss, which the authorization server advertises (RFC 9207)."
            }
            "iss_mismatch" => {
                "OAuth authorization failed: the response's iss is not the configured issuer."
            }
            "no_code" => "OAuth authorization failed: the response carries no code.",
            _ => AUTHORIZATION_ERRORS
                .iter()
                .find(|(c, _)| Some(*c) == self.code)
                .map_or(
                    "OAuth authorization failed: the authorization server answered an error.",
                    |(_, page)| page,
                ),
        }
    }
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
        Err(WaitEnd::Expired) => Err(OAuthError::Login {
            step: "wait_expired",
            code: None,
        }),
        Err(WaitEnd::Failed) => Err(OAuthError::step(OAuthStep::Callback)),
    }
}

/// The page a request head gets, and whether it ends the login: only our callback does,
/// with its code or its failure; anything else is answered and the login keeps waiting.
fn verdict(head: Option<&str>, expect: &Expected<'_>) -> Verdict<Result<String, OAuthError>> {
    let page = |status, text| Page { status, text };
    match head.map_or(Callback::NotOurs, |h| judge(h, expect)) {
        Callback::NotOurs => Verdict::Wait(page("404 Not Found", "Not found.")),
        Callback::WrongState => Verdict::Wait(page("400 Bad Request", "Invalid OAuth callback.")),
        Callback::Failed(failure) => Verdict::Done(
            page("400 Bad Request", failure.page()),
            Err(OAuthError::Login {
                step: failure.step,
                code: failure.code,
            }),
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
    // A query we cannot decode exactly cannot carry our `state`: refused like a wrong one.
    let Some(params) = crate::text::query_pairs(query) else {
        return Callback::WrongState;
    };
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
    let failed = |step, code| Callback::Failed(Failure { step, code });
    if let Some(error) = all("error").first() {
        let code = AUTHORIZATION_ERRORS
            .iter()
            .map(|(c, _)| *c)
            .find(|c| c == error);
        return failed("callback_error", code);
    }
    match all("iss").as_slice() {
        [] if expect.iss_required => return failed("iss_missing", None),
        [] => {}
        [one] if *one == expect.issuer => {}
        _ => return failed("iss_mismatch", None),
    }
    match all("code").as_slice() {
        [code] if !code.is_empty() => Callback::Code((*code).to_string()),
        _ => failed("no_code", None),
    }
}

/// What the browser's round trip gave, to exchange for a token, and the client it was for
/// when that was registered.
struct Grant<'a> {
    code: &'a str,
    verifier: &'a str,
    redirect_uri: &'a str,
    registered: Option<Registered>,
}

/// The code for a token, saved to `token_file` with a registered client: under the file's
/// lock the space for the token is reserved before the code is spent, so a volume that
/// cannot take it fails the login before the grant exists.
fn exchange(
    client: &mut Client,
    discovered: &Discovered,
    login: &AuthorizationCode<'_>,
    grant: Grant<'_>,
    token_file: &std::path::Path,
) -> Result<token::Token, OAuthError> {
    let settings = login.settings;
    let attempt = Attempt::new(Deadline::after(login.step_timeout, Bound::TimeoutMs));
    let _lock = store::lock(token_file, attempt.deadline())?;
    let reservation = store::reserve(&store::Os, token_file)?;
    let auth = settings
        .client_auth(grant.registered.as_ref())
        .ok_or(OAuthError::LoginRequired)?;
    let mut token = token::request(
        client,
        discovered,
        &auth,
        &[
            ("grant_type", "authorization_code"),
            ("code", grant.code),
            ("code_verifier", grant.verifier),
            ("redirect_uri", grant.redirect_uri),
        ],
        login.secrets,
        &attempt,
    )?;
    token.registered = grant.registered;
    reservation.commit(&token, &settings.binding(login.endpoint))?;
    Ok(token)
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
        let failed = |step, code| Callback::Failed(Failure { step, code });
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
            (
                "/callback?code=c&state=s1&iss=https%3A%2F%2Fas.example&x=%zz",
                h,
                Callback::WrongState,
            ),
            ("/callback?code=c&state=s1", h, failed("iss_missing", None)),
            (
                "/callback?code=c&state=s1&iss=https%3A%2F%2Fevil",
                h,
                failed("iss_mismatch", None),
            ),
            (
                "/callback?code=c&state=s1&iss=https%3A%2F%2Fas.example&iss=https%3A%2F%2Fas.example",
                h,
                failed("iss_mismatch", None),
            ),
            (
                "/callback?error=access_denied&state=s1&iss=https%3A%2F%2Fas.example",
                h,
                failed("callback_error", Some("access_denied")),
            ),
            (
                "/callback?error=made_up&state=s1",
                h,
                failed("callback_error", None),
            ),
            (
                "/callback?state=s1&iss=https%3A%2F%2Fas.example",
                h,
                failed("no_code", None),
            ),
            (
                "/callback?code=&state=s1&iss=https%3A%2F%2Fas.example",
                h,
                failed("no_code", None),
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
            failed("iss_mismatch", None)
        );
        // The browser's page names the failure, never text from the server.
        let denied = Failure {
            step: "callback_error",
            code: Some("access_denied"),
        };
        assert!(denied.page().contains("access_denied"));
        let other = Failure {
            step: "callback_error",
            code: None,
        };
        assert!(!other.page().contains("made_up"));
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
