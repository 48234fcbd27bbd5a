//! A health check's token: never interactive, reused within the target's run, refreshed
//! before it expires, rotated refresh tokens persisted.
//!
//! [`Authorizer::authorization`] answers, in order:
//!
//! 1. the token this target run already holds, while it is usable (well-formed and more than
//!    five seconds from expiry — whatever scope it was granted);
//! 2. with a token file, under its lock: the file's token when it is usable (another run may
//!    just have refreshed it); `authorization_code` with no refresh token is
//!    MISCONFIGURED `mcp_login` before any traffic;
//! 3. otherwise a new token: discovery (once per run), then `client_credentials`, or
//!    a refresh with the newest refresh token (the file's, else `refresh_token_env`'s);
//!    a refresh that returns no new refresh token keeps the old one; with a token file the
//!    result is written back before the lock is released.
//!
//! A functional call the server rejects is never retried with a fresh token.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use super::OAuthError;
use super::discovery::{self, Discovered, ResourceRule};
use super::store::{self, Binding};
use super::token::{self, ClientAuth, Token};
use super::url;
use crate::config::OAuthOptions;
use crate::contract::{OAuthGrant, Secret};
use crate::net::{Client, Endpoint};
use crate::result::reason::OAuthStep;
use crate::result::{Evidence, Fact, Key};
use crate::runtime::{Attempt, SecretLog};

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

    /// How the client authenticates at the token endpoint.
    pub(crate) fn client_auth(&self) -> ClientAuth<'_> {
        ClientAuth {
            id: &self.configured.client_id,
            secret: self.client_secret.as_ref(),
            method: self.configured.token_endpoint_auth_method,
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

/// One target run's OAuth state.
pub(crate) struct Authorizer {
    settings: Arc<Settings>,
    endpoint: Endpoint,
    secrets: SecretLog,
    token: Option<Token>,
    discovered: Option<Discovered>,
    /// What this run's successful OAuth steps established, for the checks' evidence.
    facts: Evidence,
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
            token: None,
            discovered: None,
            facts: Evidence::default(),
        }
    }

    /// The evidence of this run's OAuth so far (`auth_method`, …): facts, never values.
    pub(crate) fn facts(&self) -> &Evidence {
        &self.facts
    }

    /// The `Authorization` value for the next MCP request, within `attempt`.
    pub(crate) fn authorization(
        &mut self,
        client: &mut Client,
        attempt: &Attempt,
    ) -> Result<String, OAuthError> {
        if let Some(token) = self.token.as_ref().filter(|t| t.usable(SystemTime::now())) {
            return Ok(token.authorization());
        }
        let settings = Arc::clone(&self.settings);
        let token = match settings.token_file() {
            Some(path) => {
                let _lock = store::lock(path, attempt.deadline())?;
                let binding = settings.binding(&self.endpoint);
                let saved = store::read(path, &binding, &self.secrets)?;
                match saved {
                    Some(t) if t.usable(SystemTime::now()) => t,
                    saved => {
                        let refresh = saved
                            .and_then(|t| t.refresh)
                            .or_else(|| self.token.as_ref().and_then(|t| t.refresh.clone()));
                        let fresh = self.acquire(client, refresh, attempt)?;
                        store::write(path, &fresh, &binding)?;
                        fresh
                    }
                }
            }
            None => {
                let refresh = self.token.as_ref().and_then(|t| t.refresh.clone());
                self.acquire(client, refresh, attempt)?
            }
        };
        let header = token.authorization();
        if let Some(method) = token.method {
            method.record(&mut self.facts);
        }
        self.token = Some(token);
        Ok(header)
    }

    /// A new token by the configured grant; `refresh` is the newest saved refresh token.
    fn acquire(
        &mut self,
        client: &mut Client,
        refresh: Option<Secret>,
        attempt: &Attempt,
    ) -> Result<Token, OAuthError> {
        let settings = Arc::clone(&self.settings);
        let refresh = match settings.configured.grant {
            OAuthGrant::ClientCredentials => None,
            OAuthGrant::RefreshToken => Some(
                refresh
                    .or_else(|| settings.refresh_token.clone())
                    .ok_or_else(|| OAuthError::step(OAuthStep::NoRefreshToken))?,
            ),
            OAuthGrant::AuthorizationCode => Some(
                refresh
                    .or_else(|| settings.refresh_token.clone())
                    .ok_or(OAuthError::LoginRequired)?,
            ),
        };
        if settings.configured.grant == OAuthGrant::ClientCredentials
            && settings.client_secret.is_none()
        {
            // The loader requires client_secret_env; an empty value is refused by the plan.
            return Err(OAuthError::step(OAuthStep::AuthMethod));
        }
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
        // Said only when the binding was not exact: the root document named the origin or
        // a path prefix.
        if discovered.compat {
            self.facts.set(Key::Discovery, Fact::Word("2025-03-26"));
        }
        if discovered.rule != ResourceRule::Exact {
            self.facts
                .set(Key::ResourceRule, Fact::Word(discovered.rule.as_word()));
        }
        let auth = settings.client_auth();
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
        Ok(token)
    }
}
