//! A health check's token: never interactive, acquired at most once per target run, refreshed
//! before it expires, rotated refresh tokens persisted without ever losing one.
//!
//! [`Authorizer::authorization`] answers, in order:
//!
//! 1. the run's outcome so far: the failure an earlier request of this run met (every
//!    dimension shares the one OAuth acquisition, so none waits on the authorization server
//!    again), else the token the run holds while it is usable (well-formed and more than five
//!    seconds from expiry — whatever scope it was granted);
//! 2. with a token file, under its lock: a newer token a killed run left is recovered
//!    (`token_file=recovered`), then the file's token is used when it is usable (another run
//!    may just have refreshed it); `authorization_code` with no refresh token is
//!    MISCONFIGURED `mcp_login` before any traffic;
//! 3. otherwise a new token. With a token file, the space to save it is reserved first; when
//!    that fails nothing is spent: the current access token is used while it is unexpired
//!    (the check DEGRADED, `token_file=unwritable` and the `os_error`), else the run fails —
//!    UNKNOWN `local_resource=disk` for a full, over-quota or failing volume, MISCONFIGURED for
//!    a read-only or forbidden one. Then discovery (once per run), `client_credentials` or a
//!    refresh with the newest refresh token (the file's, else `refresh_token_env`'s); a refresh
//!    that returns no new refresh token keeps the old one; the result is saved before the lock
//!    is released, and a save that fails leaves the token for the next run to recover while
//!    this run uses it (DEGRADED, `token_file=unsaved`).
//!
//! Every request runs within the attempt's deadline less a small margin
//! ([`margin`]), so a silent or trickling authorization server ends as this run's own typed
//! outcome (`oauth=<step>`, `failure=timeout`) before the engine's watchdog cuts the attempt.
//! A functional call the server rejects is never retried with a fresh token.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::OAuthError;
use super::discovery::{self, Discovered};
use super::registration::Registered;
use super::store::{self, Binding, Disk};
use super::token::{self, ClientAuth, Token};
use super::url;
use crate::config::OAuthOptions;
use crate::contract::{OAuthGrant, Secret};
use crate::net::{Client, Endpoint};
use crate::result::reason::{McpFailure, OAuthStep, Reason};
use crate::result::{Evidence, Fact, Key};
use crate::runtime::{Attempt, Deadline, SecretLog};

/// `mcp.oauth` as configured, with the secrets its variables name resolved (by the plan).
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The section as written: issuer, client id, grant, token file, scopes, callback port.
    pub configured: OAuthOptions,
    /// `client_secret_env`'s value, for a confidential client.
    pub client_secret: Option<Secret>,
    /// `refresh_token_env`'s value.
    pub refresh_token: Option<Secret>,
}

impl Settings {
    /// Where tokens persist (`token_file`).
    pub(crate) fn token_file(&self) -> Option<&Path> {
        self.configured.token_file.as_deref().map(Path::new)
    }

    /// How the client authenticates at the token endpoint: the configured client, else the
    /// one `login --register` registered (`registered`, from the token file); `None` when
    /// there is neither.
    pub(crate) fn client_auth<'a>(
        &'a self,
        registered: Option<&'a Registered>,
    ) -> Option<ClientAuth<'a>> {
        match (&self.configured.client_id, registered) {
            (Some(id), _) => Some(ClientAuth {
                id,
                secret: self.client_secret.as_ref(),
                method: self.configured.token_endpoint_auth_method,
            }),
            (None, Some(r)) => Some(ClientAuth {
                id: &r.client_id,
                secret: r.secret.as_ref(),
                method: Some(r.method),
            }),
            (None, None) => None,
        }
    }

    /// What a token file for `endpoint` must be bound to.
    pub(crate) fn binding(&self, endpoint: &Endpoint) -> Binding {
        Binding {
            issuer: self.configured.issuer.clone(),
            resource: url::resource_uri(endpoint),
            client_id: self.configured.client_id.clone(),
        }
    }
}

/// What a target run's OAuth tells the authentication check beside its token.
#[derive(Clone, Debug, Default)]
pub(crate) struct AuthFacts {
    /// `challenge_scope`, and `token_file` (`recovered`, or the save problem with `oauth`
    /// and `os_error`).
    pub evidence: Evidence,
    /// Why the check is DEGRADED although the run had a token: the token file could not take
    /// the refreshed one, so the next runs are at risk.
    pub degraded: Option<Reason>,
}

/// One target run's OAuth state.
pub(crate) struct Authorizer {
    settings: Arc<Settings>,
    endpoint: Endpoint,
    secrets: SecretLog,
    disk: Arc<dyn Disk>,
    token: Option<Token>,
    discovered: Option<Discovered>,
    /// The failure this run met: every later request gets it, without traffic.
    failed: Option<OAuthError>,
    /// The client `login --register` saved in the token file, when none is configured.
    registered: Option<Registered>,
    facts: AuthFacts,
}

impl Authorizer {
    /// An authorizer for the MCP endpoint; tokens it learns are recorded in `secrets`.
    pub(crate) fn new(
        settings: Arc<Settings>,
        endpoint: Endpoint,
        secrets: SecretLog,
    ) -> Authorizer {
        Authorizer {
            settings,
            endpoint,
            secrets,
            disk: Arc::new(store::Os),
            token: None,
            discovered: None,
            failed: None,
            registered: None,
            facts: AuthFacts::default(),
        }
    }

    /// The same, saving token files through `disk` (tests fail its calls).
    #[cfg(test)]
    pub(crate) fn with_disk(mut self, disk: Arc<dyn Disk>) -> Authorizer {
        self.disk = disk;
        self
    }

    /// What this run's OAuth has to tell the authentication check.
    pub(crate) fn facts(&self) -> &AuthFacts {
        &self.facts
    }

    /// The `Authorization` value for the next MCP request, within `attempt`.
    pub(crate) fn authorization(
        &mut self,
        client: &mut Client,
        attempt: &Attempt,
    ) -> Result<String, OAuthError> {
        if let Some(failed) = &self.failed {
            return Err(failed.clone());
        }
        if let Some(token) = self.token.as_ref().filter(|t| t.usable(SystemTime::now())) {
            return Ok(token.authorization());
        }
        let allowed = attempt.remaining();
        let end = attempt.deadline().checked_sub(margin(allowed));
        let attempt = match end {
            Some(end) => attempt.within(Deadline::new(end, attempt.bound())),
            None => attempt.clone(),
        };
        let settings = Arc::clone(&self.settings);
        let obtained = match settings.token_file() {
            Some(path) => self.through_file(path, client, &attempt),
            None => {
                let current = self.token.clone();
                let issued_for = current.as_ref().map(|t| t.resource.as_str());
                self.grant(current.as_ref())
                    .and_then(|refresh| self.acquire(client, refresh, issued_for, &attempt))
            }
        };
        match obtained {
            Ok(token) => {
                let header = token.authorization();
                if let Some(method) = token.method {
                    method.record(&mut self.facts.evidence);
                }
                self.token = Some(token);
                Ok(header)
            }
            Err(e) => {
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// The token through the token file at `path`, under its lock: recovered, read, or
    /// acquired into reserved space and saved.
    fn through_file(
        &mut self,
        path: &Path,
        client: &mut Client,
        attempt: &Attempt,
    ) -> Result<Token, OAuthError> {
        let _lock = store::lock(path, attempt.deadline())?;
        let binding = self.settings.binding(&self.endpoint);
        let disk = Arc::clone(&self.disk);
        if store::recover(&*disk, path, &binding, &self.secrets) {
            self.facts
                .evidence
                .set(Key::TokenFile, Fact::Word("recovered"));
        }
        let saved = store::read(path, &binding, &self.secrets)?;
        if let Some(token) = saved.as_ref().filter(|t| t.usable(SystemTime::now())) {
            // A token the server then refuses was revoked or expired early: log in again.
            self.facts
                .evidence
                .set(Key::TokenSource, Fact::Word("file"));
            return Ok(token.clone());
        }
        let current = saved.or_else(|| self.token.clone());
        self.registered = current.as_ref().and_then(|t| t.registered.clone());
        let refresh = self.grant(current.as_ref())?;
        let reservation = match store::reserve(&*disk, path) {
            Ok(reservation) => reservation,
            Err(e) => return self.unreserved(e, current, client, attempt),
        };
        let issued_for = current.as_ref().map(|t| t.resource.as_str());
        let fresh = self.acquire(client, refresh, issued_for, attempt)?;
        if let Err(e) = reservation.commit(&fresh, &binding) {
            self.degrade(&e);
        }
        Ok(fresh)
    }

    /// No space could be reserved for a new token (`e`): nothing that spends a refresh token
    /// is done. The current token serves while it is unexpired, and `client_credentials`,
    /// which spends nothing, still gets one; both DEGRADED. Otherwise the run fails with `e`.
    fn unreserved(
        &mut self,
        e: OAuthError,
        current: Option<Token>,
        client: &mut Client,
        attempt: &Attempt,
    ) -> Result<Token, OAuthError> {
        let token = match current.filter(|t| t.valid(SystemTime::now())) {
            Some(token) => token,
            None if self.settings.configured.grant == OAuthGrant::ClientCredentials => {
                self.acquire(client, None, None, attempt)?
            }
            None => return Err(e),
        };
        self.degrade(&e);
        Ok(token)
    }

    /// Records a token file that could not take a token while the run had one: DEGRADED.
    fn degrade(&mut self, e: &OAuthError) {
        let OAuthError::Step { step, os_error, .. } = e else {
            return;
        };
        self.facts.degraded = Some(Reason::Mcp(McpFailure::OAuth(*step)));
        let evidence = &mut self.facts.evidence;
        evidence.set(Key::Oauth, Fact::Word(step.as_word()));
        if let OAuthStep::TokenFile(problem) = step {
            evidence.set(Key::TokenFile, Fact::Word(problem.as_word()));
        }
        if let Some(os) = os_error {
            evidence.set(Key::OsError, Fact::Word(os.as_word()));
        }
    }

    /// The refresh token the configured grant spends (`None`: `client_credentials`, which
    /// spends none), from `saved` (the newest) or `refresh_token_env`; decided before any
    /// traffic.
    fn grant(&self, current: Option<&Token>) -> Result<Option<Secret>, OAuthError> {
        let settings = &self.settings;
        let saved = current.and_then(|t| t.refresh.clone());
        match settings.configured.grant {
            OAuthGrant::ClientCredentials if settings.client_secret.is_none() => {
                // The loader requires client_secret_env; an empty value is refused by the plan.
                Err(OAuthError::step(OAuthStep::AuthMethod))
            }
            OAuthGrant::ClientCredentials => Ok(None),
            OAuthGrant::RefreshToken => saved
                .or_else(|| settings.refresh_token.clone())
                .map(Some)
                .ok_or_else(|| OAuthError::step(OAuthStep::NoRefreshToken)),
            // A saved token that expired with no refresh token is its own reason: the
            // server issued none, and only a login (or offline_access) gets another.
            OAuthGrant::AuthorizationCode => saved
                .or_else(|| settings.refresh_token.clone())
                .map(Some)
                .ok_or(if current.is_some() {
                    OAuthError::LoginExpired
                } else {
                    OAuthError::LoginRequired
                }),
        }
    }

    /// A new token: `client_credentials` when `refresh` is `None`, else a refresh with it of
    /// the grant issued for the resource `issued_for` (when known). A refresh asks for the
    /// resource discovery names; when that is no longer the one the grant was issued for, no
    /// refresh is sent (`resource_changed`: an authorization server may answer
    /// `invalid_target` only after rotating, which ends the grant): log in again.
    fn acquire(
        &mut self,
        client: &mut Client,
        refresh: Option<Secret>,
        issued_for: Option<&str>,
        attempt: &Attempt,
    ) -> Result<Token, OAuthError> {
        let settings = Arc::clone(&self.settings);
        let discovered = match self.discovered.take() {
            Some(d) => d,
            None => discovery::discover(
                client,
                &self.endpoint,
                &settings.configured.issuer,
                &settings.configured.scopes,
                attempt,
            )?,
        };
        self.facts.evidence.extend(&discovered.evidence);
        let changed = issued_for.is_some_and(|was| !was.is_empty() && was != discovered.resource);
        if refresh.is_some() && changed {
            self.discovered = Some(discovered);
            return Err(OAuthError::step(OAuthStep::ResourceChanged));
        }
        let registered = self.registered.clone();
        let auth = settings
            .client_auth(registered.as_ref())
            .ok_or(OAuthError::LoginRequired)?;
        let result = match &refresh {
            None => token::request(
                client,
                &discovered,
                &auth,
                &[("grant_type", "client_credentials")],
                &self.secrets,
                attempt,
            ),
            Some(r) => token::request(
                client,
                &discovered,
                &auth,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", r.expose()),
                ],
                &self.secrets,
                attempt,
            ),
        };
        self.discovered = Some(discovered);
        let mut token = result?;
        if token.refresh.is_none() {
            token.refresh = refresh;
        }
        token.registered = registered;
        Ok(token)
    }
}

/// How much earlier than its attempt OAuth's requests must end: 10 % of the time `allowed`,
/// at most 50 ms — enough for the adapter to return its own outcome (which step, what
/// failed) before the watchdog cuts the attempt and discards whatever it would have said. A
/// socket's receive timeout fires up to a kernel tick (10 ms at 100 Hz) late, and a loaded
/// machine wakes the thread later still: measured on the 2-core development machine under
/// load, 25 ms lost the race in one silent run of five.
pub(crate) fn margin(allowed: Duration) -> Duration {
    (allowed / 10).min(Duration::from_millis(50))
}
