//! The run's secret log: every secret value learned so far, shared by the threads that learn
//! them and read once by the output's redaction pass.

use std::fmt;
use std::sync::{Arc, Mutex};

use super::sync::lock;
use crate::contract::Secret;

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
    fn a_secret_is_recorded_once_and_never_shown() {
        let s = Secret::new("canary-123".into());
        let log = SecretLog::new();
        let shared = log.clone();
        shared.record(&s);
        shared.record(&s);
        shared.record(&Secret::new(String::new()));
        assert_eq!(log.values(), vec![s]);
        assert!(!format!("{log:?}").contains("canary"));
    }
}
