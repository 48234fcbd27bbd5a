//! The one source adapters ask for an `Authorization` value.
//!
//! Adapters never read the environment: the plan resolved every referenced variable once per
//! run (registering each value for redaction) into the target's [`Credential`]. Adapters ask a
//! [`CredentialSource`] built from it, so token acquisition (OAuth) plugs in behind the same
//! trait without touching adapters' HTTP code.

use std::sync::Arc;

use crate::plan::Credential;
use crate::vocab::Secret;

/// Supplies the `Authorization` header value for a target's requests.
pub trait CredentialSource: Send + Sync {
    /// The header value to send (`Bearer …`), or `None` to send none.
    fn authorization(&self) -> Option<String>;
}

/// The source for a planned credential.
pub fn source(credential: &Credential) -> Arc<dyn CredentialSource> {
    match credential {
        Credential::None => Arc::new(NoCredentials),
        Credential::Bearer { token, .. } => Arc::new(BearerToken(token.clone())),
    }
}

/// No credentials.
pub struct NoCredentials;

impl CredentialSource for NoCredentials {
    fn authorization(&self) -> Option<String> {
        None
    }
}

/// A static bearer token read from the environment.
pub struct BearerToken(pub Secret);

impl CredentialSource for BearerToken {
    fn authorization(&self) -> Option<String> {
        Some(format!("Bearer {}", self.0.expose()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_is_sent_as_is() {
        let s = Secret::new("canary-123".into());
        assert_eq!(
            BearerToken(s).authorization().as_deref(),
            Some("Bearer canary-123")
        );
        let planned = Credential::Bearer {
            variable: "T".into(),
            token: Secret::new("tok".into()),
        };
        assert_eq!(
            source(&planned).authorization().as_deref(),
            Some("Bearer tok")
        );
        assert_eq!(source(&Credential::None).authorization(), None);
    }
}
