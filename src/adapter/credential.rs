//! Credentials: secret values and the one source adapters ask for an `Authorization` value.
//!
//! Adapters never read the environment. The engine resolves every referenced variable once
//! per run (registering each value for redaction) and hands adapters a [`CredentialSource`],
//! so OAuth can later plug in behind the same trait without touching adapters' HTTP code.

use crate::vocab::Secret;

/// Supplies the `Authorization` header value for a target's requests.
pub trait CredentialSource: Send + Sync {
    /// The header value to send (`Bearer …`), or `None` to send none.
    fn authorization(&self) -> Option<String>;
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
    }
}
