//! `agenthealth login <config.yaml> <target> [--register]`: the one interactive command.
//!
//! It finds the top-level target by name, requires `mcp.oauth` with `grant: authorization_code`
//! and every referenced variable set (and, with `--register`, no `client_id`: the registered
//! client is saved in the token file), then runs the OAuth client's login
//! ([`crate::oauth::authorization_code`]): the browser URL on stdout, a loopback callback, the
//! exchange, the token file. Each network step has the target's `timeout_ms`; the browser has
//! five minutes; SIGINT/SIGTERM end the wait at once ("OAuth login cancelled; nothing was
//! saved", exit 6). No token is printed.

use std::time::Duration;

use crate::config::Config;
use crate::contract::OAuthGrant;
use crate::error::{Error, LoginError};
use crate::net::Endpoint;
use crate::oauth::{self, OAuthError};
use crate::result::reason::OAuthStep;
use crate::run_plan::{Credential, RunPlan};
use crate::runtime::Cancel;

/// Runs the login for the target named `name` in `config`.
pub(crate) fn run(
    config: Config,
    name: &str,
    register: bool,
    cancel: &Cancel,
) -> Result<(), Error> {
    let id = config
        .roots
        .iter()
        .copied()
        .find(|&id| config.nodes.get(id).is_some_and(|t| t.name == name))
        .ok_or(Error::Login(LoginError::NotFound))?;
    let plan = RunPlan::from_env(config);
    let Some(target) = plan.targets.get(id) else {
        return Err(Error::Login(LoginError::NotFound));
    };
    let Credential::OAuth(settings) = &target.credential else {
        return Err(Error::Login(LoginError::NotAuthorizationCode));
    };
    if settings.configured.grant != OAuthGrant::AuthorizationCode {
        return Err(Error::Login(LoginError::NotAuthorizationCode));
    }
    if !target.missing_env.is_empty() {
        return Err(Error::Login(LoginError::MissingEnv(
            target.missing_env.clone(),
        )));
    }
    if register && settings.configured.client_id.is_some() {
        return Err(Error::Login(LoginError::RegisterWithClientId));
    }
    let failed = |e: OAuthError| {
        let (step, code) = match e {
            OAuthError::Step {
                step: OAuthStep::Cancelled,
                ..
            } => return Error::Login(LoginError::Cancelled),
            OAuthError::Step {
                step: OAuthStep::Par(Some(error)),
                ..
            } => (OAuthStep::Par(None).as_word(), Some(error.as_word())),
            OAuthError::Step { step, .. } => (step.as_word(), None),
            OAuthError::Network(_) => (OAuthStep::ResourceMetadata.as_word(), None),
            OAuthError::Login { step, code } => (step, code),
            OAuthError::LoginRequired | OAuthError::LoginExpired => {
                return Error::Login(LoginError::NoClient);
            }
        };
        Error::Login(LoginError::Failed(step, code))
    };
    let endpoint = Endpoint::parse(&target.target.endpoint)
        .map_err(|_| Error::Login(LoginError::Failed(OAuthStep::Endpoint.as_word(), None)))?;
    oauth::check_offline(settings, &endpoint).map_err(failed)?;
    let login = oauth::authorization_code::AuthorizationCode {
        settings,
        endpoint: &endpoint,
        secrets: &target.secrets,
        step_timeout: Duration::from_millis(target.target.timeout_ms),
        wait: oauth::authorization_code::WAIT,
        cancel,
        register,
    };
    let mut out = std::io::stdout().lock();
    oauth::authorization_code::authorize(&login, &mut out).map_err(failed)
}
