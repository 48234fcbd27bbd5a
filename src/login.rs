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
use crate::contract::{Dimension, OAuthGrant};
use crate::error::{Error, LoginError};
use crate::net::Endpoint;
use crate::oauth::{self, OAuthError};
use crate::output::doctor::Audience;
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
        let advice = advice(&e);
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
        Error::Login(LoginError::Failed { step, code, advice })
    };
    let endpoint = Endpoint::parse(&target.target.endpoint)
        .map_err(|_| failed(OAuthError::step(OAuthStep::Endpoint)))?;
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

/// What `doctor` would advise for the step that failed, read from the same observation a
/// check would record: the line then says what to change, not only where it broke. The
/// browser's round trip (`callback_error`, `iss_missing` …) names itself already.
fn advice(e: &OAuthError) -> Option<String> {
    if matches!(e, OAuthError::Login { .. }) {
        return None;
    }
    let check = crate::engine::node::to_check(Dimension::Authentication, e.observation());
    crate::output::doctor::check_advice(Dimension::Authentication, &check, Audience::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Fact, Key};

    fn stderr_line(e: OAuthError) -> String {
        let advice = advice(&e);
        let OAuthError::Step { step, .. } = e else {
            return String::new();
        };
        let failed = LoginError::Failed {
            step: step.as_word(),
            code: None,
            advice,
        };
        // A redaction pass would garble "no secret: set …"; our own words never meet it.
        Error::Login(failed).line(&|_| "[REDACTED]".to_string())
    }

    #[test]
    fn a_failed_step_says_what_to_change_in_doctors_words() {
        let public = OAuthError::step(OAuthStep::AuthMethod)
            .with_facts(|e| e.set(Key::AuthMethod, Fact::Word("none")));
        let line = stderr_line(public);
        assert!(
            line.starts_with("agenthealth: OAuth login failed (auth_method): the authorization server lists only confidential")
                && line.contains("set mcp.oauth.token_endpoint_auth_method: none")
                && line.ends_with("; verify issuer, client registration, callback and token file configuration"),
            "{line}"
        );
        let pkce = stderr_line(OAuthError::step(OAuthStep::Pkce));
        assert!(pkce.contains("(pkce): login needs PKCE S256"), "{pkce}");
    }

    #[test]
    fn the_browsers_round_trip_names_itself() {
        let e = OAuthError::Login {
            step: "callback_error",
            code: Some("access_denied"),
        };
        assert_eq!(advice(&e), None);
    }
}
