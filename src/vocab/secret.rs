//! Secret values: credentials and tokens, which no output may ever show.

use std::fmt;
use std::sync::{Arc, Mutex};

use super::sync::lock;

/// A secret value. Its `Debug` never shows the value; the one place that must send it calls
/// [`Secret::expose`].
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

/// Every secret value of a run: the environment's, resolved before the run, and the tokens an
/// authorization server issues during it. Whoever learns a secret records it here, before
/// using it; the output's one redaction pass reads it after the run. Cloning shares it.
#[derive(Clone, Default)]
pub struct SecretLog(Arc<Mutex<Vec<Secret>>>);

impl SecretLog {
    /// An empty log.
    pub fn new() -> SecretLog {
        SecretLog::default()
    }

    /// Records a secret (an empty value is nothing to hide).
    pub fn record(&self, secret: &Secret) {
        if secret.expose().is_empty() {
            return;
        }
        let mut all = lock(&self.0);
        if !all.contains(secret) {
            all.push(secret.clone());
        }
    }

    /// Every secret recorded so far.
    pub fn values(&self) -> Vec<Secret> {
        lock(&self.0).clone()
    }
}

impl fmt::Debug for SecretLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretLog({} secrets)", lock(&self.0).len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("canary-123".into());
        assert!(!format!("{s:?}").contains("canary"));
        assert_eq!(s.expose(), "canary-123");
        let log = SecretLog::new();
        let shared = log.clone();
        shared.record(&s);
        shared.record(&s);
        shared.record(&Secret::new(String::new()));
        assert_eq!(log.values(), vec![s]);
        assert!(!format!("{log:?}").contains("canary"));
    }
}
