//! Credentials: secret values and the one source adapters ask for an `Authorization` value.
//!
//! Adapters never read the environment. The engine resolves every referenced variable once
//! per run (registering each value for redaction) and hands adapters a [`CredentialSource`],
//! so OAuth can later plug in behind the same trait without touching adapters' HTTP code.

use std::fmt;

/// A secret value. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

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
    fn debug_never_shows_the_value() {
        let s = Secret::new("canary-123".into());
        assert!(!format!("{s:?}").contains("canary"));
        assert_eq!(
            BearerToken(s).authorization().as_deref(),
            Some("Bearer canary-123")
        );
    }
}
