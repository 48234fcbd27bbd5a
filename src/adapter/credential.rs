//! What a target's requests carry in `Authorization`.
//!
//! Adapters never read the environment: the plan resolved every referenced variable once per
//! run into the target's [`Credential`]. A static bearer token is sent as it is; OAuth tokens
//! are acquired by an [`Authorizer`] within the attempt that needs them (the MCP HTTP
//! transport's).

use std::sync::Arc;

use crate::net::{Client, Endpoint};
use crate::oauth::{AuthFacts, Authorizer, OAuthError};
use crate::run_plan::Credential;
use crate::runtime::{Attempt, SecretLog};

/// The static `Authorization` value of a planned credential (`Bearer …`), if it has one.
pub fn static_header(credential: &Credential) -> Option<String> {
    match credential {
        Credential::Bearer { token, .. } => Some(format!("Bearer {}", token.expose())),
        Credential::None | Credential::OAuth(_) => None,
    }
}

/// The `Authorization` source of one target run.
pub enum Authorization {
    /// Nothing, or a static value.
    Static(Option<String>),
    /// OAuth, acquiring and reusing tokens for this run.
    OAuth(Box<Authorizer>),
}

impl Authorization {
    /// The source for `credential` when talking to `endpoint`; learned tokens go to
    /// `secrets`.
    pub fn new(credential: &Credential, endpoint: &Endpoint, secrets: &SecretLog) -> Authorization {
        match credential {
            Credential::OAuth(settings) => Authorization::OAuth(Box::new(Authorizer::new(
                Arc::clone(settings),
                endpoint.clone(),
                secrets.clone(),
            ))),
            other => Authorization::Static(static_header(other)),
        }
    }

    /// The static value, for offline checks and for requests that never carry an OAuth token
    /// (the reachability `HEAD`).
    pub fn fixed(&self) -> Option<&str> {
        match self {
            Authorization::Static(value) => value.as_deref(),
            Authorization::OAuth(_) => None,
        }
    }

    /// What OAuth established beside the token, for the authentication check.
    pub fn facts(&self) -> Option<&AuthFacts> {
        match self {
            Authorization::Static(_) => None,
            Authorization::OAuth(authorizer) => Some(authorizer.facts()),
        }
    }

    /// The value for the next request, acquiring an OAuth token within `attempt` if needed.
    pub fn header(
        &mut self,
        client: &mut Client,
        attempt: &Attempt,
    ) -> Result<Option<String>, OAuthError> {
        match self {
            Authorization::Static(value) => Ok(value.clone()),
            Authorization::OAuth(authorizer) => authorizer.authorization(client, attempt).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Secret;

    #[test]
    fn a_bearer_token_is_sent_as_is() {
        let planned = Credential::Bearer {
            variable: "T".into(),
            token: Secret::new("canary-123".into()),
        };
        assert_eq!(
            static_header(&planned).as_deref(),
            Some("Bearer canary-123")
        );
        assert_eq!(static_header(&Credential::None), None);
        let endpoint = Endpoint::parse("http://127.0.0.1:9/mcp").expect("endpoint");
        let a = Authorization::new(&planned, &endpoint, &SecretLog::new());
        assert_eq!(a.fixed(), Some("Bearer canary-123"));
    }
}
